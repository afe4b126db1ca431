// legate_prof offline report viewer: plain JavaScript, no libraries, no network.
// Data arrive as script files (meta.js calls LP_meta, tiles/L{level}_{i}.js call LP_tile), so
// the folder works from file://.  Drawing follows the desktop viewer (viewer/timeline.py):
// rank headers, group utilization lines, lanes with boxes in name colours, waiting/ready
// shades, gray merged bands with counts.
"use strict";

var META = null;
var TILES = {};      // "level_i" -> tile data
var PENDING = {};    // "level_i" -> true while its script loads
var TILESET = {};    // "level_i" of every tile written (others are never requested)
var UNREFINED = {};  // "level_i" of each tile that merges items and has no child there
var ZEROS = [];
var ROW_H = 1.0, SUMMARY_H = 3.0, HEADER_H = 1.2, AXIS_PX = 22;
var BOX = 5;  // numbers per box in a tile row: start-t0, duration, name, provenance, item id
var BAND = 4;  // numbers per merged band: x0, x1 (tile px), items, thousandths of its time busy
var BAND_ALPHA = 0.3;  // replaced by the meta's (present/colors.py ALPHA_BAND)
var LABEL_MIN_PX = 48, MAX_LABELS = 400;  // replaced by the meta's (present/limits.py)
window.LP_frames = [];   // per-frame draw times in ms (read by the benchmark)

function LP_meta(m) {
  META = m;
  LABEL_MIN_PX = m.label_min_px; MAX_LABELS = m.max_labels;
  if (m.alpha_band !== undefined) BAND_ALPHA = m.alpha_band;
  Object.keys(m.tiles).forEach(function (L) { m.tiles[L].forEach(function (i) { TILESET[L + "_" + i] = true; }); });
  (m.unrefined || []).forEach(function (k) { UNREFINED[k] = true; });
  for (var k = 0; k < m.util_bins; k++) ZEROS.push(0);
}
function LP_tile(level, i, data) {
  TILES[level + "_" + i] = data;
  delete PENDING[level + "_" + i];
  view.requestDraw();
}

// Tick labels as the desktop viewer's axis writes them: the unit from the largest tick, the
// decimals from the step ("0.2 s", "40.25 ms"), not three decimals everywhere.
function tickLabels(values, step) {
  var ref = 0;
  values.forEach(function (v) { ref = Math.max(ref, Math.abs(v)); });
  ref = ref || step;
  var units = [["s", 1e9], ["ms", 1e6], ["µs", 1e3], ["ns", 1]];
  for (var k = 0; k < units.length; k++) {
    var div = units[k][1];
    if (ref >= div || div === 1) {
      var digits = step < div ? Math.min(6, Math.max(0, Math.ceil(-Math.log10(step / div) - 1e-9))) : 0;
      return values.map(function (v) { return (v / div).toFixed(digits) + " " + units[k][0]; });
    }
  }
}

function formatNs(ns) {
  var a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
  if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
  if (a >= 1e3) return (ns / 1e3).toFixed(3) + " µs";
  return Math.round(ns) + " ns";
}
function formatRange(a, b) {  // as viewer/time_text.py format_range: digits the span needs
  var span = Math.max(b - a, 0), m = Math.max(Math.abs(a), Math.abs(b)), k = 0;
  var units = [["s", 1e9], ["ms", 1e6], ["µs", 1e3], ["ns", 1]];
  while (k < 3 && m < units[k][1]) k++;
  var div = units[k][1], step = span > 0 ? span / 1000 : 1;
  var digits = Math.min(9, Math.max(0, Math.ceil(-Math.log10(step / div) - 1e-9)));
  return (a / div).toFixed(digits) + " " + units[k][0] + " – " + (b / div).toFixed(digits) + " " +
    units[k][0] + " (" + formatNs(span) + ")";
}
function busyWords(busy, a, b) {  // as viewer/item_text.py busy_words
  var span = Math.max(b - a, 0);
  var share = busy > 0 && busy < 0.001 ? "under 0.1 %" : (busy * 100).toFixed(1) + " %";
  return "its items ran " + share + " of it (" + formatNs(busy * span) + " of " + formatNs(span) + ")";
}
function formatBytes(b) {
  var units = [["GiB", 1073741824], ["MiB", 1048576], ["KiB", 1024]];
  for (var k = 0; k < units.length; k++) if (b >= units[k][1]) return (b / units[k][1]).toFixed(1) + " " + units[k][0];
  return Math.round(b) + " B";
}
function hexRgb(h) {
  if (h[0] !== "#") return null;
  return [parseInt(h.substr(1, 2), 16), parseInt(h.substr(3, 2), 16), parseInt(h.substr(5, 2), 16)];
}
function blend(rgb, a) {  // white*(1-a) + colour*a, as viewer/colors.py blend_with_white
  return "rgb(" + Math.floor(255 * (1 - a) + rgb[0] * a) + "," + Math.floor(255 * (1 - a) + rgb[1] * a) + "," +
    Math.floor(255 * (1 - a) + rgb[2] * a) + ")";
}
var NAMED = {};  // CSS colour names of the groups -> rgb, resolved once through a canvas
function cssRgb(name) {
  if (hexRgb(name)) return hexRgb(name);
  if (!NAMED[name]) {
    var c = document.createElement("canvas").getContext("2d");
    c.fillStyle = name;
    NAMED[name] = hexRgb(c.fillStyle) || [128, 128, 128];
  }
  return NAMED[name];
}

// ---- lane tree layout (viewer/layout.py LaneLayout) ----------------------------------------
function buildLayout() {
  var out = [], y = 0;
  if (META.tree.length > 1) {
    out.push({kind: "header", label: "All ranks (" + META.tree.length + ")", y: y, h: HEADER_H});
    y += HEADER_H;
    META.all_ranks.forEach(function (g) {
      out.push({kind: "summary", label: g.title, y: y, h: SUMMARY_H, rank: null, group: g.group});
      y += SUMMARY_H;
    });
  }
  META.tree.forEach(function (r) {
    out.push({kind: "header", label: "Rank " + r.rank, y: y, h: HEADER_H, rank: r.rank});
    y += HEADER_H;
    r.groups.forEach(function (g) {
      var label = g.lanes.length > 1 ? g.title + " (" + g.lanes.length + ")" : g.title;
      out.push({kind: "summary", label: label, y: y, h: SUMMARY_H, rank: r.rank, group: g.group, ref: g});
      y += SUMMARY_H;
      if (g.expanded) g.lanes.forEach(function (L) {
        var lh = Math.min(L.rows * ROW_H, META.max_lane_h);
        out.push({kind: "lane", label: L.name, tooltip: L.long, y: y, h: lh, rank: r.rank, group: g.group, lane: L.lane, rows: L.rows});
        y += lh;
      });
    });
  });
  var byLane = {}, bySummary = {}, byHeader = {};
  out.forEach(function (e) {
    if (e.kind === "lane") byLane[e.lane] = e;
    else if (e.kind === "summary") bySummary[e.rank + ":" + e.group] = e;
    else byHeader[e.rank] = e;
  });
  return {entries: out, height: y, byLane: byLane, bySummary: bySummary, byHeader: byHeader};
}

// ---- the view ------------------------------------------------------------------------------
var view = {
  t0: 0, t1: 1, scrollY: 0, rowPx: 18, layout: null, match: null, drawQueued: false,
  canvas: null, ctx: null, labels: null, lctx: null, W: 0, H: 0, dpr: 1,

  init: function () {
    this.canvas = document.getElementById("canvas");
    this.labels = document.getElementById("labels");
    this.ctx = this.canvas.getContext("2d", {alpha: false});
    this.lctx = this.labels.getContext("2d");
    this.layout = buildLayout();
    this.resize();
    // fit the lane tree when possible, rows down to 6 px (viewer/screenshot.py)
    this.rowPx = Math.max(6, Math.min(18, (this.H - AXIS_PX) / Math.max(this.layout.height, 1)));
    this.reset();
  },
  resize: function () {
    this.dpr = window.devicePixelRatio || 1;
    var r = this.canvas.getBoundingClientRect(), l = this.labels.getBoundingClientRect();
    this.W = Math.max(1, Math.floor(r.width)); this.H = Math.max(1, Math.floor(r.height));
    this.canvas.width = this.W * this.dpr; this.canvas.height = this.H * this.dpr;
    this.labels.width = Math.floor(l.width) * this.dpr; this.labels.height = this.H * this.dpr;
    this.LW = Math.floor(l.width);
  },
  // the whole run; a window's report, the window asked for (the run's range is padded:
  // 3.975 s for a --start of 4 s, a user's review found)
  reset: function () {
    var w = META.window || [null, null];
    var a = w[0] === null ? META.t0 : Math.max(w[0], META.t0), b = w[1] === null ? META.t1 : Math.min(w[1], META.t1);
    if (!(b > a)) { a = META.t0; b = META.t1; }
    this.setRange(a, b); this.scrollY = 0;
  },
  setRange: function (a, b) {
    var span = META.t1 - META.t0, pad = span * 0.05;
    var w = Math.max(b - a, 50);
    w = Math.min(w, span + 2 * pad);
    a = Math.max(META.t0 - pad, Math.min(a, META.t1 + pad - w));
    this.t0 = a; this.t1 = a + w;
    this.requestDraw();
  },
  zoomAt: function (x, factor) {
    var t = this.t0 + (this.t1 - this.t0) * x / this.W;
    this.setRange(t - (t - this.t0) * factor, t + (this.t1 - t) * factor);
  },
  pan: function (dxPx) {
    var d = dxPx * (this.t1 - this.t0) / this.W;
    this.setRange(this.t0 + d, this.t1 + d);
  },
  scroll: function (dy) {
    var maxY = Math.max(0, this.layout.height * this.rowPx - (this.H - AXIS_PX));
    this.scrollY = Math.max(0, Math.min(maxY, this.scrollY + dy));
    this.requestDraw();
  },
  requestDraw: function () {
    if (this.drawQueued || !this.ctx) return;
    this.drawQueued = true;
    var self = this;
    requestAnimationFrame(function () { self.drawQueued = false; self.draw(); });
  },

  // which tile level shows at least one tile pixel per screen pixel
  level: function () {
    var nsPx = (this.t1 - this.t0) / this.W, span = META.t1 - META.t0;
    var L = Math.ceil(Math.log2(span / (META.tile_px * nsPx)) - 1e-9);
    return Math.max(0, Math.min(META.max_level, L));
  },
  // whether the view asks finer detail than the report wrote where it merges items (the
  // writer's budget stopped its levels: the guide's 4-rank run holds 104 ms a pixel but
  // where its findings are); ``finestNsPx``: the detail that tile holds
  beyondDetail: function (tiles) {
    var nsPx = (this.t1 - this.t0) / this.W, span = META.t1 - META.t0, self = this;
    var wanted = Math.ceil(Math.log2(span / (META.tile_px * nsPx)) - 1e-9);
    return tiles.some(function (t) {
      if (t.level >= wanted || !UNREFINED[t.level + "_" + t.i]) return false;
      self.finestNsPx = t.ns_px;
      return true;
    });
  },
  // tiles to draw for the view: the wanted level where loaded, else the nearest coarser one
  tiles: function () {
    var L = this.level(), n = Math.pow(2, L), span = META.t1 - META.t0, ts = span / n;
    var i0 = Math.max(0, Math.floor((this.t0 - META.t0) / ts)), i1 = Math.min(n - 1, Math.floor((this.t1 - META.t0) / ts));
    var out = [], seen = {};
    for (var i = i0; i <= i1; i++) {
      var wanted = true;
      for (var l = L, j = i; l >= 0; l--, j = Math.floor(j / 2)) {
        var key = l + "_" + j;
        if (!TILESET[key]) continue;           // not written: its parent's boxes are exact
        if (!TILES[key]) { if (wanted) loadTile(l, j); wanted = false; continue; }
        if (!seen[key]) {
          seen[key] = {level: l, i: j, t0: META.t0 + span * j / Math.pow(2, l), ns_px: span / Math.pow(2, l) / META.tile_px, data: TILES[key], clip: []};
          out.push(seen[key]);
        }
        // a coarser tile shows only where no finer one is loaded
        var c = seen[key].clip, a = META.t0 + ts * i, b = a + ts;
        if (c.length && c[c.length - 1][1] >= a) c[c.length - 1][1] = b; else c.push([a, b]);
        break;
      }
    }
    out.sort(function (a, b) { return a.level - b.level; });  // coarse first, finer drawn over
    return out;
  },

  draw: function () {
    var t_start = performance.now();
    var ctx = this.ctx, W = this.W, H = this.H;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
    var tiles = this.tiles();
    var nsPx = (this.t1 - this.t0) / W, rowPx = this.rowPx;
    var labels = [];
    var entries = this.layout.entries, vis = [];
    for (var k = 0; k < entries.length; k++) {
      var e = entries[k];
      var top = AXIS_PX + e.y * rowPx - this.scrollY, h = e.h * rowPx;
      if (top + h < AXIS_PX || top > H) continue;
      vis.push([e, top, h]);
      if (e.kind === "header") { ctx.fillStyle = "rgb(235,238,245)"; ctx.fillRect(0, top, W, h); }
      else if (e.kind === "summary") { ctx.fillStyle = "rgb(250,250,250)"; ctx.fillRect(0, top, W, h); ctx.fillStyle = "rgb(210,210,210)"; ctx.fillRect(0, top + h - 1, W, 1); }
    }
    for (var t = 0; t < tiles.length; t++) {
      var tl = tiles[t], one = [tl];
      ctx.save(); ctx.beginPath();
      for (var c = 0; c < tl.clip.length; c++) {
        var xa = (tl.clip[c][0] - this.t0) / nsPx, xb = (tl.clip[c][1] - this.t0) / nsPx;
        ctx.rect(xa, 0, xb - xa, H);
      }
      ctx.clip();
      for (k = 0; k < vis.length; k++) {
        e = vis[k][0];
        if (e.kind === "summary") this.drawSummary(e, one, vis[k][1], vis[k][2], nsPx);
        else if (e.kind === "lane") this.drawLane(e, one, vis[k][1], nsPx, labels);
      }
      ctx.restore();
    }
    this.drawLabels(labels);
    drawCritical(this, nsPx);  // the run's critical path (if shown) and the selected item
    this.drawMarkers(nsPx);
    this.drawAxis();
    this.drawLaneLabels();
    document.getElementById("range").textContent = formatRange(this.t0, this.t1);
    this.detailEnds = this.beyondDetail(tiles);
    var spots = (META.detail_spots || []).map(function (d) { return formatNs(d.time) + " (" + d.finding + ")"; });
    document.getElementById("detail-note").textContent = this.detailEnds ?
      "no finer detail in this report here (" + formatNs(this.finestNsPx) + " a pixel): " +
      "`legate_prof view` shows every item" + (spots.length ? "; this report keeps it at " + spots.join(", ") : "") : "";
    var dt = performance.now() - t_start;
    window.LP_frames.push(dt);
    performance.measure("lp-frame", {start: t_start, end: t_start + dt});
    if (!window.LP_firstPaint && tiles.length && !Object.keys(PENDING).length) {
      window.LP_firstPaint = performance.now();
      performance.mark("lp-first-paint");
    }
  },

  drawSummary: function (e, tiles, top, h, nsPx) {
    var ctx = this.ctx;
    var key = (e.rank === null ? "all" : e.rank) + ":" + e.group;
    var color = cssRgb(META.group_colors[e.group] || "gray");
    var base = top + h - 2, amp = h - 5;
    ctx.beginPath();
    var first = true, lastX = 0;
    for (var t = 0; t < tiles.length; t++) {
      var tl = tiles[t], vals = tl.data.util[key] || ZEROS;
      var binNs = tl.ns_px * META.tile_px / vals.length;
      var xa = (tl.t0 - this.t0) / nsPx, bw = binNs / nsPx;
      var j0 = Math.max(0, Math.floor(-xa / bw) - 1), j1 = Math.min(vals.length, Math.ceil((this.W - xa) / bw) + 1);
      // when several bins share a pixel, keep the pixel's mean
      var step = Math.max(1, Math.floor(1 / bw));
      for (var j = j0; j < j1; j += step) {
        var s = 0, c = 0;
        for (var q = j; q < Math.min(j + step, j1); q++) { s += vals[q]; c++; }
        var x = xa + (j + step / 2) * bw, y = base - (s / c / 255) * amp;
        if (first) { ctx.moveTo(xa + j0 * bw, base); ctx.lineTo(xa + j0 * bw, y); first = false; }
        ctx.lineTo(x, y); lastX = xa + j1 * bw;
      }
      if (!first) ctx.lineTo(lastX, y);
    }
    if (first) return;
    ctx.lineTo(lastX, base); ctx.closePath();
    ctx.fillStyle = blend(color, 0.3); ctx.fill();
    // the line itself, without the closing edges
    ctx.beginPath(); first = true;
    for (t = 0; t < tiles.length; t++) {
      tl = tiles[t]; vals = tl.data.util[key] || ZEROS;
      binNs = tl.ns_px * META.tile_px / vals.length; xa = (tl.t0 - this.t0) / nsPx; bw = binNs / nsPx;
      j0 = Math.max(0, Math.floor(-xa / bw) - 1); j1 = Math.min(vals.length, Math.ceil((this.W - xa) / bw) + 1);
      step = Math.max(1, Math.floor(1 / bw));
      for (j = j0; j < j1; j += step) {
        s = 0; c = 0;
        for (q = j; q < Math.min(j + step, j1); q++) { s += vals[q]; c++; }
        x = xa + (j + step / 2) * bw; y = base - (s / c / 255) * amp;
        if (first) { ctx.moveTo(x, y); first = false; } else ctx.lineTo(x, y);
      }
    }
    ctx.strokeStyle = "rgb(" + color.join(",") + ")"; ctx.lineWidth = 1; ctx.stroke();
    // 0 / 50 / 100 % marks, as the desktop viewer; a memory of unknown capacity is on a
    // bytes scale: 0 / half / its peak, labelled
    ctx.strokeStyle = "rgb(200,200,200)"; ctx.setLineDash([2, 3]); ctx.beginPath();
    ctx.moveTo(0, base - amp + 0.5); ctx.lineTo(this.W, base - amp + 0.5);
    ctx.moveTo(0, base - amp / 2 + 0.5); ctx.lineTo(this.W, base - amp / 2 + 0.5); ctx.stroke(); ctx.setLineDash([]);
    if (h >= 30) {
      var peak = bytesPeak(e), marks = peak === null ? ["100%", "50%", "0"] :
        ["peak " + formatBytes(peak), formatBytes(peak / 2), "0 B"];
      ctx.font = "8px sans-serif"; ctx.fillStyle = "rgb(120,120,120)"; ctx.textBaseline = "middle";
      ctx.fillText(marks[0], 2, base - amp + 3); ctx.fillText(marks[1], 2, base - amp / 2); ctx.fillText(marks[2], 2, base - 2);
    }
  },

  drawLane: function (e, tiles, top, nsPx, labels) {
    var ctx = this.ctx, W = this.W, rowPx = this.rowPx * e.h / e.rows;
    var gap = rowPx > 4 ? 1 : 0, hh = Math.max(rowPx - 2 * gap, 1);
    var match = this.match, colors = META.colors, onPath = match ? null : pathHighlight();
    for (var t = 0; t < tiles.length; t++) {
      var tl = tiles[t], rows = tl.data.lanes[e.lane];
      if (!rows) continue;
      var off = (tl.t0 - this.t0) / nsPx, k = tl.ns_px / nsPx, minNs = 3 * tl.ns_px;
      for (var r = 0; r < rows.length; r++) {
        var row = rows[r], y = top + row.row * rowPx + gap;
        if (y > this.H || y + hh < AXIS_PX) continue;
        var g = row.g, dim = match || onPath;
        // a merged band: light gray, filled from the bottom as high as the share of its time
        // its items ran (g[j + 3], thousandths), as the desktop draws it (viewer/timeline/item.py)
        var ground = blend([128, 128, 128], dim ? BAND_ALPHA / 2 : BAND_ALPHA);
        var full = dim ? blend([128, 128, 128], 0.35) : "rgb(128,128,128)";
        for (var j = 0; j < g.length; j += BAND) {
          var gx0 = off + g[j] * k, gx1 = off + g[j + 1] * k;
          if (gx1 < -2 || gx0 > W + 2) continue;
          var gw = Math.max(gx1 - gx0, 1), fill = Math.max(g[j + 3] / 1000 * hh, 1);
          ctx.fillStyle = ground; ctx.fillRect(gx0, y, gw, hh);
          ctx.fillStyle = full; ctx.fillRect(gx0, y + hh - fill, gw, fill);
          if (hh >= 9 && gw >= LABEL_MIN_PX && labels.length < MAX_LABELS) labels.push([gx0, y, gw, hh, -g[j + 2], g[j + 3]]);
        }
        var b = row.b, boxX = [];
        for (j = 0; j < b.length; j += BOX) {
          var x0 = (tl.t0 + b[j] - this.t0) / nsPx;
          var wpx = b[j + 1] / nsPx;
          if (b[j + 1] < minNs) wpx = Math.max(wpx, 3 * k); else wpx = Math.max(wpx, 1);
          boxX.push(x0, wpx);
          if (x0 + wpx < -2 || x0 > W + 2) continue;
          var nid = b[j + 2], col = colors[nid];
          var hit = match ? (match.names[nid] || match.provs[b[j + 3]]) : (!onPath || onPath[b[j + 4]]);
          ctx.fillStyle = hit ? col : blend(hexRgb(col), 0.2);
          var xa = Math.max(x0, -2), xb = Math.min(x0 + wpx, W + 2);
          ctx.fillRect(xa, y, Math.max(xb - xa, 1), hh);
          if (hh >= 9 && xb - xa >= LABEL_MIN_PX && labels.length < MAX_LABELS) labels.push([xa, y, xb - xa, hh, j / BOX, b]);
        }
        var w = row.w;
        for (j = 0; j < w.length; j += 4) {  // ready (45 %) and waiting (15 %) pieces
          var rgb = hexRgb(colors[b[w[j] * BOX + 2]]);
          var sa = (tl.t0 + w[j + 2] - this.t0) / nsPx, se = (tl.t0 + w[j + 3] - this.t0) / nsPx;
          if (se < -2 || sa > W + 2 || se - sa < 0.5) continue;
          ctx.fillStyle = blend(rgb, w[j + 1] === 2 ? META.alpha_waiting : META.alpha_ready);
          ctx.fillRect(sa, y, se - sa, hh);
        }
      }
    }
  },

  drawLabels: function (labels) {
    var ctx = this.ctx;
    ctx.font = "11px sans-serif"; ctx.textBaseline = "middle";
    for (var i = 0; i < labels.length; i++) {
      var L = labels[i], text;
      if (L[4] < 0 && L.length === 6) {
        text = "×" + (-L[4]) + " merged"; if (ctx.measureText(text).width > L[2] - 4) text = "×" + (-L[4]);
        if (ctx.measureText(text).width > L[2] - 4) continue;  // a count is never cut short
        ctx.fillStyle = L[5] >= 500 ? "#fff" : "rgb(40,40,40)";  // (on its fill, or its ground)
      }
      else { text = itemTitle(L[5], L[4]); ctx.fillStyle = "rgb(20,20,20)"; }
      text = elide(ctx, text, L[2] - 4);
      if (text) ctx.fillText(text, L[0] + 2, L[1] + L[3] / 2);
    }
  },
  drawMarkers: function (nsPx) {
    // (the labels of several — each rank that ran out — one below the other where they would
    // overlap, as the desktop view draws them: two ranks' failures a few ms apart hid one)
    var ctx = this.ctx, placed = [];
    (META.markers || []).forEach(function (m) {
      var x = (m.time - view.t0) / nsPx;
      if (x < -1 || x > view.W + 1) return;
      ctx.strokeStyle = "rgb(210,20,20)"; ctx.lineWidth = 2; ctx.setLineDash([6, 4]);
      ctx.beginPath(); ctx.moveTo(x, AXIS_PX); ctx.lineTo(x, view.H); ctx.stroke(); ctx.setLineDash([]);
      ctx.fillStyle = "rgb(210,20,20)"; ctx.font = "11px sans-serif";
      // (wider than the view, it is cut at its end: at 900 px an out-of-memory label ran off
      // the left edge, its start, the key fact, lost — a review)
      var text = m.title, tw = ctx.measureText(text).width + 8;
      if (tw > view.W) { text = elide(ctx, m.title, view.W - 8); tw = ctx.measureText(text).width + 8; }
      var bx = Math.min(Math.max(x - tw, 0), view.W - tw), by = AXIS_PX + 2;
      while (placed.some(function (b) { return bx < b[0] + b[2] && b[0] < bx + tw && by < b[1] + 18 && b[1] < by + 18; }))
        by += 18;
      placed.push([bx, by, tw]);
      ctx.fillRect(bx, by, tw, 16); ctx.fillStyle = "#fff"; ctx.fillText(text, bx + 4, by + 8);
    });
    window.LP_marker_boxes = placed;  // (where the labels went: the tests read it)
  },
  drawAxis: function () {
    var ctx = this.ctx, W = this.W, span = this.t1 - this.t0;
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, AXIS_PX);
    ctx.fillStyle = "rgb(90,90,90)"; ctx.fillRect(0, AXIS_PX - 1, W, 1);
    var raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw))), step = p;
    [1, 2, 5, 10].forEach(function (m) { if (raw >= m * p) step = m * p; });
    ctx.font = "11px sans-serif"; ctx.textBaseline = "middle"; ctx.fillStyle = "rgb(30,30,30)";
    var ticks = [];
    for (var t = Math.ceil(this.t0 / step) * step; t <= this.t1; t += step) ticks.push(t);
    var labels = tickLabels(ticks, step);
    for (var k = 0; k < ticks.length; k++) {
      var x = (ticks[k] - this.t0) / span * W;
      ctx.fillRect(x, AXIS_PX - 6, 1, 5);
      ctx.fillText(labels[k], x + 2, 8);
    }
  },
  drawLaneLabels: function () {
    var c = this.lctx, H = this.H, LW = this.LW;
    c.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    c.fillStyle = "#fff"; c.fillRect(0, 0, LW, H);
    c.textBaseline = "middle";
    var es = this.layout.entries;
    for (var k = 0; k < es.length; k++) {
      var e = es[k], top = AXIS_PX + e.y * this.rowPx - this.scrollY, h = e.h * this.rowPx;
      if (top + h < AXIS_PX || top > H) continue;
      if (e.kind === "header") { c.fillStyle = "rgb(235,238,245)"; c.fillRect(0, top, LW, h); c.font = "bold 11px sans-serif"; c.fillStyle = "rgb(30,30,30)"; c.fillText(e.label, 4, top + h / 2); continue; }
      if (e.kind === "summary") {
        var col = cssRgb(META.group_colors[e.group] || "gray");
        c.fillStyle = "rgb(" + col.join(",") + ")"; c.fillRect(2, top + 2, 4, h - 4);
        c.font = "11px sans-serif"; c.fillStyle = "rgb(30,30,30)";
        var mark = e.rank === null ? "" : (e.ref.expanded ? "▾ " : "▸ ");
        c.fillText(elide(c, mark + e.label, LW - 12), 10, top + h / 2);
      } else {
        c.font = (Math.min(11, Math.max(7, this.rowPx - 2))) + "px sans-serif"; c.fillStyle = "rgb(60,60,60)";
        c.fillText(elide(c, e.label, LW - 22), 20, top + Math.min(h, this.rowPx) / 2);
      }
    }
    c.fillStyle = "rgb(90,90,90)"; c.fillRect(LW - 1, 0, 1, H);
  },

  // what is under (x, y): {kind: "item", ...} | {kind: "band", ...} | {kind: "summary", ...}
  hit: function (x, y) {
    var es = this.layout.entries, ry = (y - AXIS_PX + this.scrollY) / this.rowPx, e = null;
    for (var k = 0; k < es.length; k++) if (es[k].y <= ry && ry < es[k].y + es[k].h) { e = es[k]; break; }
    if (!e || e.kind === "header") return null;
    var nsPx = (this.t1 - this.t0) / this.W, t = this.t0 + x * nsPx, tiles = this.tiles();
    if (e.kind === "summary") {
      var key = (e.rank === null ? "all" : e.rank) + ":" + e.group;
      for (var i = 0; i < tiles.length; i++) {
        var tl = tiles[i], v = tl.data.util[key] || ZEROS, tspan = tl.ns_px * META.tile_px;
        if (v && t >= tl.t0 && t < tl.t0 + tspan) return {kind: "summary", entry: e, util: v[Math.floor((t - tl.t0) / tspan * v.length)] / 255};
      }
      return null;
    }
    var row = Math.floor((ry - e.y) * e.rows / e.h), best = null;
    for (i = 0; i < tiles.length; i++) {
      tl = tiles[i];
      var rows = tl.data.lanes[e.lane];
      if (!rows) continue;
      for (var r = 0; r < rows.length; r++) {
        if (rows[r].row !== row) continue;
        var b = rows[r].b, minNs = 3 * tl.ns_px;
        for (var j = 0; j < b.length; j += BOX) {
          var s = tl.t0 + b[j], d = Math.max(b[j + 1], b[j + 1] < minNs ? minNs : nsPx);
          if (t >= s - nsPx && t <= s + d + nsPx) best = {kind: "item", entry: e, row: row, id: b[j + 4], start: s, dur: b[j + 1], name: b[j + 2], prov: b[j + 3], waited: waitedOf(rows[r], j / BOX, 0), calls: waitedOf(rows[r], j / BOX, 1)};
        }
        if (best) return best;
        var g = rows[r].g;
        for (j = 0; j < g.length; j += BAND) {
          var a = tl.t0 + g[j] * tl.ns_px, z = tl.t0 + g[j + 1] * tl.ns_px;
          if (t >= a && t <= z) return {kind: "band", entry: e, start: a, stop: z, count: g[j + 2], busy: g[j + 3] / 1000};
        }
      }
    }
    return null;
  }
};

// a box's time waiting (k 0: its waiting and ready pieces, all of them, in or out of the
// tile) or in the calls it made (k 1), or null: it has none (``report/query._waited``: box,
// waiting, in calls)
function waitedOf(row, box, k) {
  var t = row.t || [];
  for (var j = 0; j < t.length; j += 3) if (t[j] === box) return t[j + 1 + k];
  return null;
}
// a box's time split as the desktop's details split it, and stats' "running": [label, ns]
function timeSplit(waited, calls, dur) {
  if (waited === null || waited === undefined) return [];
  var out = [["Waiting", waited]];
  if (calls) out.push(["In its calls", calls]);
  out.push(["Running", dur - waited - (calls || 0)]);
  return out;
}
function itemTitle(b, j) {  // trace_model.item_title: name[prog.py:16]
  return composedTitle(b[j * BOX + 2], b[j * BOX + 3]);
}
function composedTitle(name, prov) {
  var n = META.names[name], p = META.provenances[prov];
  if (p && p !== n && META.title_prov[name]) return n + "[" + p.split("/").pop() + "]";
  return n;
}
function elide(ctx, text, w) {
  if (w <= 6) return "";
  if (ctx.measureText(text).width <= w) return text;
  var lo = 0, hi = text.length;
  while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (ctx.measureText(text.slice(0, mid) + "…").width <= w) lo = mid; else hi = mid - 1; }
  return lo ? text.slice(0, lo) + "…" : "";
}
function loadTile(level, i) {
  var key = level + "_" + i;
  if (TILES[key] || PENDING[key]) return;
  PENDING[key] = true;
  loadScript("tiles/L" + level + "_" + i + ".js", function () { delete PENDING[key]; });
}
// a data file of the report folder, through a <script> tag (works from file://)
function loadScript(src, onerror) {
  var s = document.createElement("script");
  s.src = src;
  s.onerror = function () { console.warn("missing " + src); if (onerror) onerror(); };
  document.head.appendChild(s);
}

// ---- tooltip, search, interaction -----------------------------------------------------------
// a memory row of unknown capacity: its peak in bytes (its values are shares of it), else null
function bytesPeak(e) {
  var key = (e.rank === null ? "all" : e.rank) + ":" + e.group, rows = META.bytes_rows || {};
  return Object.prototype.hasOwnProperty.call(rows, key) ? rows[key] : null;
}
function describe(h) {
  if (h.kind === "summary") {
    var peak = bytesPeak(h.entry), where = h.entry.label + (h.entry.rank === null ? " (all ranks)" : " (rank " + h.entry.rank + ")") + ": ";
    if (peak !== null) return where + formatBytes(h.util * peak) + " in use (peak " + formatBytes(peak) + ")";
    return where + Math.round(h.util * 100) + "% utilization";
  }
  if (h.kind === "band") return h.count + " merged items (too small to see)\n" + busyWords(h.busy, h.start, h.stop) + "\n" + formatRange(h.start, h.stop) + (view.detailEnds ? "\nno finer detail in this report here: `legate_prof view` shows each item" : "\ndouble-click to zoom in");
  var name = META.names[h.name], prov = META.provenances[h.prov];
  var lines = [prov && prov !== name && META.title_prov[h.name] ? name + "[" + prov.split("/").pop() + "]" : name,
    "Rank " + h.entry.rank + " · " + h.entry.label + (h.entry.tooltip ? " — " + h.entry.tooltip : ""),
    "Start     " + formatNs(h.start), "Stop      " + formatNs(h.start + h.dur), "Duration  " + formatNs(h.dur)];
  if (prov) lines.push("Provenance " + prov);
  timeSplit(h.waited, h.calls, h.dur).forEach(function (x) { lines.push((x[0] + "         ").slice(0, Math.max(10, x[0].length + 1)) + formatNs(x[1])); });
  return lines.join("\n");
}

function runSearch(text) {
  var q = text.trim().toLowerCase(), out = document.getElementById("search-count");
  if (!q) { view.match = null; out.textContent = ""; view.requestDraw(); return; }
  var names = {}, provs = {}, nn = 0, np = 0;
  META.names.forEach(function (n, i) { if (n.toLowerCase().indexOf(q) >= 0) { names[i] = true; nn++; } });
  META.provenances.forEach(function (p, i) { if (p && p.toLowerCase().indexOf(q) >= 0) { provs[i] = true; np++; } });
  view.match = {names: names, provs: provs, text: q};
  // what is highlighted, by kind ("18 tasks, 18 application calls"), as the desktop counts it
  var byKind = {}, count = 0;
  (META.name_lines || []).forEach(function (r) {
    if (names[r[0]] || provs[r[1]]) { byKind[r[2]] = (byKind[r[2]] || 0) + r[3]; count += r[3]; }
  });
  var words = Object.keys(byKind).sort(function (a, b) { return byKind[b] - byKind[a] || a - b; }).map(function (k) {
    var w = (META.kind_words || {})[k] || ["item", "items"];
    return byKind[k].toLocaleString("en-US") + " " + w[byKind[k] === 1 ? 0 : 1];
  });
  out.textContent = nn + " name(s), " + np + " provenance(s) match" + (count ? " · " + count.toLocaleString("en-US") + (count === 1 ? " item" : " items") + " (" + words.join(", ") + ")" : "");
  view.requestDraw();
}

function setupInteraction() {
  var cv = view.canvas, tip = document.getElementById("tooltip"), tl = document.getElementById("timeline");
  var drag = null;
  cv.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var x = ev.offsetX;
    if (ev.shiftKey) { view.scroll(ev.deltaY); return; }
    view.zoomAt(x, Math.pow(1.2, ev.deltaY / 100));
  }, {passive: false});
  view.labels.addEventListener("wheel", function (ev) { ev.preventDefault(); view.scroll(ev.deltaY); }, {passive: false});
  cv.addEventListener("mousedown", function (ev) { drag = {x: ev.clientX, y: ev.clientY}; tl.focus(); cv.style.cursor = "grabbing"; });
  window.addEventListener("mouseup", function () { drag = null; cv.style.cursor = "grab"; });
  window.addEventListener("mousemove", function (ev) {
    if (drag) {
      view.pan(drag.x - ev.clientX); view.scroll(drag.y - ev.clientY);
      drag.x = ev.clientX; drag.y = ev.clientY; tip.style.display = "none"; return;
    }
  });
  cv.addEventListener("mousemove", function (ev) {
    if (drag) return;
    var h = view.hit(ev.offsetX, ev.offsetY);
    if (!h) { tip.style.display = "none"; return; }
    tip.textContent = describe(h);
    tip.style.display = "block";
    tip.style.left = Math.min(ev.offsetX + view.LW + 14, tl.clientWidth - tip.offsetWidth - 4) + "px";
    tip.style.top = Math.min(ev.offsetY + 14, tl.clientHeight - tip.offsetHeight - 4) + "px";
  });
  cv.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  cv.addEventListener("dblclick", function (ev) {
    var h = view.hit(ev.offsetX, ev.offsetY);
    if (h && h.kind === "band") view.setRange(h.start, h.stop);
    else if (h && h.kind === "item") view.setRange(h.start - h.dur * 0.1, h.start + h.dur * 1.1);
  });
  view.labels.addEventListener("click", function (ev) {
    var ry = (ev.offsetY - AXIS_PX + view.scrollY) / view.rowPx;
    view.layout.entries.forEach(function (e) {
      if (e.kind === "summary" && e.rank !== null && e.y <= ry && ry < e.y + e.h) {
        e.ref.expanded = !e.ref.expanded;
        view.layout = buildLayout(); view.requestDraw();
      }
    });
  });
  tl.addEventListener("keydown", function (ev) {
    var k = ev.key, handled = true;
    if (k === "ArrowLeft") view.pan(-view.W * 0.1);
    else if (k === "ArrowRight") view.pan(view.W * 0.1);
    else if (k === "ArrowUp") view.scroll(-3 * view.rowPx);
    else if (k === "ArrowDown") view.scroll(3 * view.rowPx);
    else if (k === "+" || k === "=") view.zoomAt(view.W / 2, 1 / 1.5);
    else if (k === "-" || k === "_") view.zoomAt(view.W / 2, 1.5);
    else if (k === "0") view.reset();
    else handled = false;
    if (handled) ev.preventDefault();
  });
  document.getElementById("reset").addEventListener("click", function () { view.reset(); });
  document.getElementById("search").addEventListener("input", function (ev) { runSearch(ev.target.value); });
  window.addEventListener("resize", function () { view.resize(); view.requestDraw(); });
}

// ---- legend, statistics, findings, pictures -------------------------------------------------
function buildLegend() {
  var el = document.getElementById("legend"), parts = [];
  var groups = {};
  META.tree.forEach(function (r) { r.groups.forEach(function (g) { groups[g.group] = g.title; }); });
  Object.keys(groups).forEach(function (g) { parts.push([META.group_colors[g] || "gray", groups[g] + " (utilization)"]); });
  // the desktop legend (viewer/legend.py): states on one task colour, gray bands, fills
  var base = [70, 130, 180];
  parts.unshift(["rgb(70,130,180)", "running"], [blend(base, META.alpha_ready), "ready"],
    [blend(base, META.alpha_waiting), "waiting"], ["rgb(128,128,128)", "merged (too small to draw; ×count, filled as busy)"],
    [blend(cssRgb(META.group_colors.system || "gray"), 0.3), "memory / utilization fill"]);
  // tasks and the runtime's operations apart: an operation has its task's name and colour
  [["tasks", (META.stats.tasks || []).concat(META.stats.gpu_kernels || [])],
   ["operations (ops lane)", META.stats.operations || []]].forEach(function (sec) {
    var rows = sec[1].slice().sort(function (a, b) { return b.total_ns - a.total_ns; }), seen = {};
    rows = rows.filter(function (r) { var n = seen[r.name]; seen[r.name] = true; return !n; });
    if (!rows.length) return;
    parts.push([null, sec[0] + ":"]);
    rows.slice(0, 12).forEach(function (r) { var i = META.names.indexOf(r.name); if (i >= 0) parts.push([META.colors[i], r.name]); });
  });
  parts.forEach(function (p) {
    var s = document.createElement("span");
    if (p[0] === null) { s.className = "legend-head"; s.textContent = p[1]; el.appendChild(s); return; }
    var sw = document.createElement("span");
    sw.className = "sw"; sw.style.background = p[0]; s.appendChild(sw); s.appendChild(document.createTextNode(p[1])); el.appendChild(s);
  });
}

// A cell: times and sizes in units, nested parts as words (a memory kind's count and
// capacity, a task's variants with their counts and running time), never raw JSON.
function cellText(key, v, depth) {
  depth = depth || 0;
  if (v === null || v === undefined) return "";
  if (key === "skew_pairs" && Array.isArray(v)) {  // (as the window's clock skew notice says it: furthest apart first)
    v = v.slice().sort(function (a, b) { return Math.abs(b.mean_ns) - Math.abs(a.mean_ns) || b.messages - a.messages || a.sender - b.sender || a.receiver - b.receiver; });
    return v.slice(0, 5).map(function (p) {
      return "rank " + p.receiver + "'s clock reads " + formatNs(p.mean_ns) + " behind rank " + p.sender + "'s (±" + formatNs(p.spread_ns) + ", " + p.messages.toLocaleString("en-US") + " messages)";
    }).join("; ") + (v.length > 5 ? "; … " + (v.length - 5) + " more" : "");
  }
  if (typeof v === "number" && /_ns$/.test(key)) return formatNs(v);
  if (key === "capacity_bytes" && typeof v === "number" && v <= 0) return "unknown";  // (as stats says it)
  if (typeof v === "number" && /bytes$/.test(key)) return formatBytes(v);
  if (typeof v === "number") return v.toLocaleString("en-US");
  if (Array.isArray(v)) return v.slice(0, 5).map(function (x) { return cellText(key, x, depth + 1); }).join("; ") + (v.length > 5 ? "; … " + (v.length - 5) + " more" : "");
  if (typeof v === "object") {
    var label = v.variant !== undefined ? v.variant : v.mapper !== undefined ? v.mapper : v.name;
    if (depth > 0 && v.count !== undefined) {  // a part: what it is, how many, how long or big
      var size = v.running_ns !== undefined ? ", running " + formatNs(v.running_ns)
        : v.capacity_bytes !== undefined ? (v.capacity_bytes > 0 ? ", " + formatBytes(v.capacity_bytes) : ", capacity unknown") : "";
      return (label !== undefined ? label + ": " : "") + v.count.toLocaleString("en-US") + "×" + size;
    }
    return Object.keys(v).map(function (k) { return headerText(k) + ": " + cellText(k, v[k], depth + 1); }).join("; ");
  }
  return String(v);
}
// "134.066 ms" never breaks between the number and its unit (a non-breaking space).
function keepUnits(text) {
  return text.replace(/(\d) (?=(?:s|ms|µs|ns|B|KiB|MiB|GiB)(?![\w]))/g, "$1\u00a0");
}
// A table of given cells: heads [text, tooltip], rows of cells {text, num, title, pct}; a
// number's cell never wraps; pct: the share of the row or column, after it in gray.
function cellTable(heads, rows, cls) {
  var t = document.createElement("table"), tr = document.createElement("tr");
  if (cls) t.className = cls;
  heads.forEach(function (h) {
    var th = document.createElement("th"); th.textContent = h[0]; if (h[1]) th.title = h[1]; tr.appendChild(th);
  });
  t.appendChild(tr);
  rows.forEach(function (r) {
    var row = document.createElement("tr");
    r.forEach(function (c) {
      var td = document.createElement("td");
      td.textContent = keepUnits(c.text);
      if (c.num) td.className = "num";
      if (c.title) td.title = c.title;
      if (c.pct !== undefined) {
        var sp = document.createElement("span"); sp.className = "pct"; sp.textContent = c.pct; td.appendChild(sp);
      }
      row.appendChild(td);
    });
    t.appendChild(row);
  });
  return t;
}
function pctText(part, whole) { return whole ? (100 * part / whole).toFixed(1) + "\u00a0%" : "–"; }
function timeCell(ns, whole) {  // "3.209 s 81.0 %"; an exact 0: a dash
  if (!ns) return {text: "–", num: true, title: "0 ns"};
  var c = {text: formatNs(ns), num: true};
  if (whole !== undefined) c.pct = pctText(ns, whole);
  return c;
}
function para(el, text, cls) {
  var p = document.createElement("p"); p.textContent = text; if (cls) p.className = cls; el.appendChild(p); return p;
}
function heading(el, text) { var h = document.createElement("h3"); h.textContent = text; el.appendChild(h); }

// ---- idle time explained (stats' "idle"): the stats text's table, units and shares --------
var WAIT_WORDS = {  // docs/stats_json.md, "idle": what the item that ended the idle time waited for
  copy_fill: "a copy, fill or dependent-partitioning operation",
  mapping: "runtime work on a utility processor (meta-tasks, mapper or runtime calls)",
  task: "another task (or a call inside one: the program's thread launching it)",
  message: "a message", memory: "an instance (an allocation that waited for others to be freed)",
  unknown: "nothing known (an event no loaded profile records)"};
function idleHeads(first) {
  return first.concat([["idle", "sum over the group's lanes of the time between items, from the run's start to each lane's last item"]])
    .concat(META.stats.idle.waits.map(function (w) { return [w, "waited for " + (WAIT_WORDS[w] || w) + "; % of the row's idle time"]; }));
}
function idleCells(r) {
  return [timeCell(r.idle_ns)].concat(META.stats.idle.waits.map(function (w) { return timeCell(r.by_wait[w], r.idle_ns); }));
}
function buildIdle(el) {
  var idle = META.stats.idle, titles = META.group_titles || {};
  heading(el, "idle time explained");
  var groups = idle.groups.filter(function (g) { return g.idle_ns; });
  para(el, "Idle time inside the run, by what the next item waited for (summed over each group's lanes: " +
       "2 lanes idle 1 s each make 2 s; the % is of the row's idle time)." +
       (groups.length < idle.groups.length ? " " + (idle.groups.length - groups.length) + " group(s) never idled." : ""));
  el.appendChild(cellTable(idleHeads([["rank"], ["group"]]), groups.map(function (g) {
    return [{text: String(g.rank), num: true}, {text: titles[g.kind] || g.kind, title: g.lanes + " lane(s)"}].concat(idleCells(g));
  }), "idle-groups"));
  if (!idle.by_provenance.length) return;
  para(el, "By the source line whose work ended the idle time: the " + idle.by_provenance.length +
       " line(s) with the most, as `stats --json` lists them (its text shows the first five).");
  el.appendChild(cellTable(idleHeads([["source line"]]), idle.by_provenance.map(function (r) {
    return [{text: r.provenance}].concat(idleCells(r));
  }), "idle-lines"));
}

// ---- the critical path, split as `legate_prof critical` splits it -------------------------
var KIND_WORDS = {  // analyze/critical_path.py
  compute: "tasks, kernels, application calls",
  waiting: "tasks on the path not running: blocked in a wait, or ready for their processor",
  launch: "the program's own thread (the top-level task) running between the operations it launches",
  blocked: "the program's own thread waiting: for a value, for the other ranks, or for the runtime to take more work",
  runtime: "mapping and runtime meta-work: meta-tasks, messages, mapper and runtime calls",
  copy: "copies", fill: "fills", dependent_partitioning: "dependent partitioning",
  startup: "the runtime starting on every rank, before the path starts at the program's top-level task",
  shutdown: "the runtime cleaning up after the program's top-level task ended",
  unknown: "waiting for an event no loaded profile records (where the chain stops), and the run before it",
  gap: "no item on the path was running: a message in flight, a task waiting for its processor, clocks of two ranks"};
function splitTable(head, rows, span, tips) {
  return cellTable([[head], ["time"], [META.window ? "% of window" : "% of run"]], rows.map(function (r) {
    var c = timeCell(r[1]);
    return [{text: r[0], title: tips ? tips[r[0]] : undefined}, c, {text: pctText(r[1], span), num: true}];
  }), "crit-split");
}
function buildCriticalSplit() {
  var el = document.getElementById("critical-split"), c = META.critical_split;
  if (!c || !c.available) { para(el, "No critical path in this report: " + (c ? c.why : "not computed")); return; }
  if (!c.steps) { para(el, "No critical path: " + ((META.critical || {}).why || "it holds no item") + "."); return; }
  var span = c.run_ns || c.span_ns, run = META.stats.span_ns;  // (the shares add up to the run)
  if (c.header && c.header.length) {  // (legate_prof critical's own lines: where the path lies in the run)
    c.header.forEach(function (line, k) { para(el, line, k && /^Note: /.test(line) ? "note" : undefined); });
  } else {
    para(el, "The run's critical path: " + c.steps.toLocaleString("en-US") + " items over " + formatNs(span) +
         ", from the item that ended last back to where the chain stops" +
         (run ? " (the run, first start to last stop: " + formatNs(run[1] - run[0]) + ")" : "") + ".");
  }
  if (!c.event_records) para(el, "The profile holds no event graph records (Legion writes them from format 1011 on): the path follows creators only.", "note");
  var box = document.createElement("div"); box.className = "splits"; el.appendChild(box);
  var part = function (title, table) {
    var d = document.createElement("div"); heading(d, title); d.appendChild(table); box.appendChild(d); return d;
  };
  part("By kind", splitTable("kind", Object.keys(c.by_kind).map(function (k) { return [k, c.by_kind[k]]; }), span, KIND_WORDS)).id = "crit-by-kind";
  part("By lane group", splitTable("group", c.by_group.map(function (g) { return [g.title, g.ns]; }), span)).id = "crit-by-group";
  var rows = c.by_line.slice();
  var lines = part("By source line", splitTable("source line", rows, span));
  lines.id = "crit-by-line";
  if (c.lines > rows.length) para(lines, "and " + (c.lines - rows.length) + " more line(s): " + formatNs(c.lines_rest_ns) + " (legate_prof critical --json lists all)", "aside");
  var lined = c.lines_rest_ns;
  rows.forEach(function (r) { lined += r[1]; });
  if (c.lines && span - lined > 0) para(lines, "the other " + formatNs(span - lined) + " (" + pctText(span - lined, span) + "): no source line", "aside");
  if (!c.lines) para(lines, "no source line: the profile's items carry none (give the run's .runtime.prof files)", "aside");
  para(el, "Kinds: " + Object.keys(KIND_WORDS).map(function (k) { return k + ": " + KIND_WORDS[k]; }).join(" · ") +
       ".", "help");
}

function headerText(key, section) {  // total_ns -> "total" (the cells say the unit)
  if (section === "instances" && key === "total_ns") return "lifetimes summed";
  // (an operation's time while any of its tasks ran: `stats`'s "tasks ran"; "running" read
  // as the operation's own, a review)
  if (section === "operations" && key === "running_ns") return "tasks ran";
  return key.replace(/_(ns|bytes)$/, "").replace(/^by_/, "by ").replace(/_/g, " ");
}
function table(rows, limit, section) {
  var t = document.createElement("table"), keys = [];
  rows.forEach(function (r) { Object.keys(r).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); }); });
  // a lane group's internal key ("proc_other") where its title says it in words
  if (keys.indexOf("title") >= 0 && keys.indexOf("kind") >= 0) keys.splice(keys.indexOf("kind"), 1);
  var tr = document.createElement("tr");
  keys.forEach(function (k) { var th = document.createElement("th"); th.textContent = headerText(k, section); tr.appendChild(th); });
  t.appendChild(tr);
  rows.slice(0, limit).forEach(function (r) {
    var row = document.createElement("tr");
    keys.forEach(function (k) {
      var td = document.createElement("td"); td.textContent = keepUnits(cellText(k, r[k]));
      if (typeof r[k] === "number") td.className = "num";
      row.appendChild(td);
    });
    t.appendChild(row);
  });
  return t;
}
// Inputs that could not be read and warnings (a rank without a readable file, a cut log):
// at the top, so a timeline with data missing never looks complete.
function buildProblems() {
  var s = META.stats || {}, el = document.getElementById("problems");
  // (a file read and left out, another run's, says so itself: "Left out")
  var items = (s.errors || []).map(function (e) { return ["error", (/Left out/.test(e) ? "" : "could not read ") + e]; })
    .concat((s.warnings || []).map(function (w) { return ["warning", String(w).replace(/^warning: /, "")]; }));
  if (!items.length) return;
  items.forEach(function (it) {
    var d = document.createElement("div");
    d.className = it[0];
    d.textContent = (it[0] === "error" ? "⚠ " : "") + it[1];
    el.appendChild(d);
  });
  el.hidden = false;
}
// Clock skew between nodes, a slow network: in the screenshot header's words ("Note: …").
function buildNotices() {
  var el = document.getElementById("notices");
  (META.notices || []).forEach(function (n) {
    var d = document.createElement("div"); d.textContent = n; el.appendChild(d);
  });
  el.hidden = !(META.notices || []).length;
}
// The run's files as the title says them (present/file_list.py: a numbered run of 1,000
// ranks as its first and last; its 1,000 names filled the page's first screen); a folder
// written before the label was kept gives the names, as then.
function filesLabel(files) {
  return META.files_label || files.map(function (f) { return f.split("/").pop(); }).join(", ");
}
function buildStats() {
  var el = document.getElementById("stats"), s = META.stats;
  var p = document.createElement("p");
  p.textContent = filesLabel(s.files || []) + " — " + s.ranks + " rank(s), " + (s.items || 0).toLocaleString("en-US") + " items" + (s.legion_version ? " — " + s.legion_version : "");
  el.appendChild(p);
  Object.keys(s).forEach(function (k) {
    var v = s[k];
    if (k === "idle") { if (v && v.groups) buildIdle(el); return; }
    if (k === "markers") v = markerRows(v);  // (read as `stats` prints them, not raw)
    if (Array.isArray(v) && v.length && typeof v[0] === "object") {
      var h = document.createElement("h3"); h.textContent = k.replace(/_/g, " "); el.appendChild(h);
      el.appendChild(table(v, 200, k));
    } else if (v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length) {
      h = document.createElement("h3"); h.textContent = k.replace(/_/g, " "); el.appendChild(h);
      el.appendChild(table([v], 1, k));
    }
  });
}
function markerRows(markers) {
  // a marker as words: when, which rank, what, and its report's fields (a review read the
  // time in bare nanoseconds and the report as one dump of ids and sizes)
  return (markers || []).map(function (m) {
    var fields = m.fields || {};
    return {when: formatNs(m.time), rank: m.rank === undefined ? "" : m.rank, what: m.title || m.kind || "",
            details: Object.keys(fields).map(function (f) { return f + ": " + fields[f]; }).join("; ")};
  });
}
function findingWindow(f) {
  if (f.window_ns) return f.window_ns;
  var a = f.start_ns !== undefined ? f.start_ns : (f.window ? f.window[0] : (f.t0 !== undefined ? f.t0 : null));
  var b = f.stop_ns !== undefined ? f.stop_ns : (f.window ? f.window[1] : (f.t1 !== undefined ? f.t1 : null));
  return a === null || b === null ? null : [a, b];
}
function buildFindings() {
  var list = META.findings, said = list && list.explained_words;
  var below = list && list.below;  // (where those of no time of their own begin, and the words)
  if (list && !Array.isArray(list)) list = list.findings || [];
  var none = META.findings && META.findings.none_words;
  if (!list || (!list.length && !none)) return;  // insights not available: the panel stays hidden
  document.getElementById("findings-section").hidden = false;
  var ol = document.getElementById("findings");
  if (!list.length) {  // (as `insights` says it: "No finding: …")
    var q = document.createElement("p"); q.id = "findings-none"; q.textContent = none;
    ol.parentNode.insertBefore(q, ol);
    return;
  }
  if (said) {  // (insights' own first line: how much of the run the costs are shares of)
    var p = document.createElement("p"); p.id = "findings-explained"; p.textContent = said;
    ol.parentNode.insertBefore(p, ol);
  }
  list.forEach(function (f, k) {
    if (below && k === below.at) {  // (as `insights` heads them: the list was one run on, the
      var h = document.createElement("p"); h.className = "findings-below";  // costless
      h.textContent = below.words;  // looking like peers of the dearest: a review)
      ol.parentNode.appendChild(h);
      ol = document.createElement("ol"); ol.start = k + 1; h.parentNode.appendChild(ol);
    }
    var li = document.createElement("li");
    var b = document.createElement("b");
    b.textContent = typeof f === "string" ? f : (f.title || f.message || f.summary || JSON.stringify(f));
    li.appendChild(b);
    if (typeof f === "object") {
      var more = [];
      if (f.cost_words) more.push(f.cost_words);  // (insights' own words: wall-clock, processor time)
      else if (f.cost_ns !== undefined && f.pattern !== "out_of_memory" && f.pattern !== "crash") more.push("costs " + formatNs(f.cost_ns));  // (a failure has no cost line, as in `insights`)
      if (f.idle_words) more.push(f.idle_words);
      if (f.provenance && f.provenance.length) more.push("at " + f.provenance.slice(0, 6).join(", "));
      if (f.remedy) more.push("remedy: " + f.remedy);
      li.appendChild(document.createTextNode(" " + more.join(" · ") + " "));
      if (f.evidence_words && f.evidence_words.length) {  // (an out-of-memory report's
        var d = document.createElement("details"), sm = document.createElement("summary");
        sm.textContent = "evidence"; d.appendChild(sm);  // holders: the guide's story)
        var pre = document.createElement("pre"); pre.className = "evidence";
        pre.textContent = f.evidence_words.join("\n"); d.appendChild(pre);
        if (f.pattern === "out_of_memory") d.open = true;
        li.appendChild(d);
      }
    }
    var w = typeof f === "object" ? findingWindow(f) : null;
    if (w) {
      var a = document.createElement("a"); a.href = "#timeline-section"; a.textContent = "show " + formatNs(w[0]) + " – " + formatNs(w[1]);
      a.addEventListener("click", function () { view.setRange(w[0], w[1]); });
      li.appendChild(a);
    }
    ol.appendChild(li);
  });
}
function buildPictures() {
  var el = document.getElementById("pictures");
  if (!META.pictures.length) { el.textContent = META.pictures_note || "no pictures"; return; }
  META.pictures.forEach(function (p) {
    var h = document.createElement("h3"); h.textContent = p.title; el.appendChild(h);
    var a = document.createElement("a"); a.href = p.file;
    var img = document.createElement("img"); img.src = p.file; img.alt = p.title + " zoomed out";
    a.appendChild(img); el.appendChild(a);
  });
}

window.addEventListener("DOMContentLoaded", function () {
  if (!META) { document.body.textContent = "meta.js did not load: keep the report folder together."; return; }
  document.getElementById("title").textContent = "legate_prof report — " + filesLabel(META.files) +
    " — " + META.ranks_read + " rank(s), " + META.n_items.toLocaleString() + " items" +
    // (the run's length as insights and critical give it: the view's range, 0 - 236.7 s, was
    // the only length near the top of a 235.258 s run: a review)
    (META.findings && META.findings.run_ns ? ", the run " + formatNs(META.findings.run_ns) : "") +
    (META.window ? " in the window " + (META.window[0] === null ? "the start" : formatNs(META.window[0])) +
     " – " + (META.window[1] === null ? "the end" : formatNs(META.window[1])) + " (--start/--stop)" : "");
  view.init();
  setupInteraction();
  setupCritical();
  buildLegend();
  buildProblems();
  buildNotices();
  buildFindings();
  buildCriticalSplit();
  buildStats();
  buildPictures();
  window.LP_ready = true;
});
