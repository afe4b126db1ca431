// An X client that measures how long a window's GUI thread takes to answer (benchmarks/freeze_probe.py).
//   x_ping_probe ping WID SECONDS INTERVAL_MS : a _NET_WM_PING every INTERVAL_MS (Qt's GUI thread
//       answers it); prints "stall T_MONO LATENCY_MS" for each answer over 50 ms (T_MONO: when the
//       ping was sent, CLOCK_MONOTONIC seconds, the clock of Python's time.monotonic()), then a
//       summary line.  Ends after SECONDS, or as soon as the window is gone.
//   x_ping_probe close WID : asks the window to close, as a window manager's close button does
//       (WM_DELETE_WINDOW); prints the CLOCK_MONOTONIC time it was sent.
// Build: gcc -O2 -o x_ping_probe x_ping_probe.c -lX11 (after /work/shared/gui/probe.c)
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/select.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int gone = 0;
static int on_error(Display *d, XErrorEvent *e) {
  (void)d;
  if (e->error_code == BadWindow) gone = 1;
  return 0;
}

static void send_protocol(Display *d, Window w, Atom wmp, Atom what, long arg) {
  XEvent e;
  memset(&e, 0, sizeof e);
  e.xclient.type = ClientMessage;
  e.xclient.window = w;
  e.xclient.message_type = wmp;
  e.xclient.format = 32;
  e.xclient.data.l[0] = what;
  e.xclient.data.l[1] = arg;
  e.xclient.data.l[2] = w;
  XSendEvent(d, w, False, NoEventMask, &e);
  XFlush(d);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: x_ping_probe ping WID SECONDS INTERVAL_MS | close WID\n");
    return 2;
  }
  Display *d = XOpenDisplay(NULL);
  if (!d) {
    fprintf(stderr, "no display\n");
    return 1;
  }
  XSetErrorHandler(on_error);
  Window w = strtoul(argv[2], 0, 0);
  Atom wmp = XInternAtom(d, "WM_PROTOCOLS", False);
  if (!strcmp(argv[1], "close")) {
    send_protocol(d, w, wmp, XInternAtom(d, "WM_DELETE_WINDOW", False), CurrentTime);
    XSync(d, False);
    printf("closed %.6f\n", now());
    return 0;
  }
  if (argc < 5) return 2;
  double dur = atof(argv[3]), iv = atof(argv[4]) / 1000.0;
  Atom ping = XInternAtom(d, "_NET_WM_PING", False);
  // the answer goes to the root window (EWMH), the window's end to its parent or root
  XSelectInput(d, DefaultRootWindow(d), StructureNotifyMask);
  XSelectInput(d, w, StructureNotifyMask);
  double t0 = now(), sent_t = 0, mx = 0, sum = 0, mxat = 0;
  long id = 1000, waiting = 0;
  int n = 0, over100 = 0, over50 = 0, fd = ConnectionNumber(d);
  while (now() - t0 < dur && !gone) {
    if (!waiting) {
      send_protocol(d, w, wmp, ping, ++id);
      XSync(d, False);
      if (gone) break;
      sent_t = now();
      waiting = id;
    }
    while (XPending(d)) {
      XEvent e;
      XNextEvent(d, &e);
      if (e.type == DestroyNotify) gone = 1;
      if (e.type == ClientMessage && e.xclient.message_type == wmp &&
          (Atom)e.xclient.data.l[0] == ping && e.xclient.data.l[1] == waiting) {
        double lat = now() - sent_t;
        n++;
        sum += lat;
        if (lat > mx) { mx = lat; mxat = sent_t; }
        if (lat > 0.1) over100++;
        if (lat > 0.05) {
          over50++;
          printf("stall %.6f %.1f\n", sent_t, lat * 1000);
          fflush(stdout);
        }
        waiting = 0;
      }
    }
    if (!waiting) {
      usleep((useconds_t)(iv * 1e6));
    } else {
      fd_set s;
      FD_ZERO(&s);
      FD_SET(fd, &s);
      struct timeval tv = {0, 2000};
      select(fd + 1, &s, 0, 0, &tv);
    }
  }
  if (waiting && !gone) {
    double lat = now() - sent_t;
    printf("pending %.6f %.1f\n", sent_t, lat * 1000);
    if (lat > mx) { mx = lat; mxat = sent_t; }
  }
  printf("summary pings %d mean_ms %.1f max_ms %.1f max_at %.6f over50 %d over100 %d gone %d\n",
         n, n ? sum / n * 1000 : 0, mx * 1000, mxat, over50, over100, gone);
  return 0;
}
