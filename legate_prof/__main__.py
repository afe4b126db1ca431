try:
    from legate_prof.cli import main
except KeyboardInterrupt:  # (Ctrl-C while the command line's modules are imported)
    raise SystemExit(130) from None

raise SystemExit(main())
