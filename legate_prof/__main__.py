from legate_prof.cli import main

raise SystemExit(main())
