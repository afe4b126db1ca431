// The critical path in the report, as in the desktop viewer: click a box for its details
// (what it waited for, with a link that jumps to it; what it held up), "[" walks back to what
// the selected item waited for, "]" forward to the first item it held up (while the path is
// drawn and the item is on it: the step before or after on the path), "p" draws the run's
// critical path over the lanes.  Data (report/critical.py): path.js calls LP_path, the lookup
// files links/C{k}.js call LP_links; both load through <script> tags, never fetch/XHR.
"use strict";

var CRIT = {path: null, pathSet: null, shown: false, loading: false, chunks: {}, waiting: {},
            listed: {}, lanes: {}, sel: null, status: "", back: []};
var PATH_COLOR = "rgb(200,0,150)", HALO = "rgba(255,255,255,0.9)";

function critMeta() { return META.critical || {available: false, why: "not in this report"}; }

function LP_path(p) {
  CRIT.path = p;
  CRIT.pathSet = {};
  p.item.forEach(function (i) { CRIT.pathSet[i] = true; });
  CRIT.loading = false;
  if (CRIT.shown) setStatus(pathSummary());
  view.requestDraw();
}
function LP_links(c, data) {
  var idx = {};
  data.id.forEach(function (id, k) { idx[id] = k; });
  CRIT.chunks[c] = {data: data, idx: idx};
  var w = CRIT.waiting[c] || [];
  delete CRIT.waiting[c];
  w.forEach(function (f) { f(); });
}
// the items drawn in full colour while the path is shown (the others dimmed), else null
function pathHighlight() { return CRIT.shown && CRIT.pathSet ? CRIT.pathSet : null; }

// ---- the records of the lookup files -----------------------------------------------------------
function chunkOf(id) { return Math.floor(id / critMeta().chunk); }
// run then() once the lookup files holding ``ids`` are loaded (or known not to exist)
function withRecords(ids, then) {
  var need = [];
  ids.forEach(function (id) {
    if (id === null || id === undefined || id < 0 || !critMeta().available) return;
    var c = chunkOf(id);
    if (CRIT.listed[c] && !CRIT.chunks[c] && need.indexOf(c) < 0) need.push(c);
  });
  if (!need.length) { then(); return; }
  var left = need.length;
  need.forEach(function (c) {
    var first = !CRIT.waiting[c];
    (CRIT.waiting[c] = CRIT.waiting[c] || []).push(function () { if (--left === 0) then(); });
    if (first) loadScript("links/C" + c + ".js", function () { LP_links(c, {id: []}); });
  });
}
function record(id) {
  if (id === null || id === undefined || id < 0 || !critMeta().available) return null;
  var c = CRIT.chunks[chunkOf(id)];
  if (!c || !(id in c.idx)) return null;
  var d = c.data, k = c.idx[id];
  return {id: id, lane: d.lane[k], row: d.row[k], start: d.start[k], stop: d.stop[k],
          name: d.name[k], prov: d.prov[k], via: d.via[k], pred: d.pred[k], lag: d.lag[k],
          creation: d.creation[k], done: d.done[k], note: d.note[k], held: d.held[k],
          next: d.next[k], title: d.title[String(id)]};
}

// ---- the details' words (query/details.py critical_fields, item_label) ------------------------
function formatUs(ns) {  // present.units.format_ns_us
  return (ns / 1000).toLocaleString("en-US", {minimumFractionDigits: 3, maximumFractionDigits: 3}) + " µs";
}
function titleOf(r) { return r.title !== undefined ? r.title : composedTitle(r.name, r.prov); }
function itemLabel(r) {  // "BinaryOp[prog.py:16] on c1", "Copy n0s0-n0f0", "Fill into n0s0"
  var L = CRIT.lanes[r.lane], title = titleOf(r);
  if (L && L.group === "channel") return L.name.indexOf("fill ") === 0 ? "Fill into " + L.name.slice(5) : title + " " + L.name;
  var ofRank = L && META.n_ranks > 1 ? " of rank " + L.rank : "";  // every rank has a u0
  return title + " on " + (L ? L.name : "lane " + r.lane) + ofRank;
}
function labelOf(id) {
  var r = record(id);
  return r ? itemLabel(r) : "item " + id + " (not in this report's lookup files)";
}
// [{label, text, target, forward}]: "Waited for" / "Created by" (back), "Held up" (forward)
function linkFields(r) {
  var out = [], m = critMeta();
  if (r.via >= 0) {
    var via = m.via[r.via], j = r.pred >= 0 ? r.pred : null;
    var note = r.note >= 0 ? m.notes[r.note] : "";
    note = note && note !== "deletion" ? " (" + note + ")" : "";
    if (via === "event" && j !== null) {
      var verb = r.done ? "ended" : "triggered what it waited for";
      var when = r.lag === null ? "" : r.lag >= 0 ? ", " + verb + " " + formatUs(r.lag) + " before this became ready"
        : ", " + verb + " " + formatUs(-r.lag) + " after this became ready (the two clocks differ)";
      out.push({label: "Waited for", text: labelOf(j) + when + note, target: j});
    } else if (via === "creator" && j !== null) {
      out.push({label: "Created by", text: labelOf(j) + " at " + formatUs(r.creation) + "; all it waited for had happened by then" + note, target: j});
    } else if (via === "creator" || via === "unknown_creator") {
      out.push({label: "Created by", text: "nothing in the loaded profile" + note, target: null});
    } else if (via === "deallocation") {
      out.push({label: "Waited for", text: "other instances to be freed (its allocation was deferred)", target: null});
    } else {
      out.push({label: "Waited for", text: "an event no loaded profile records" + note + ": the critical path stops here", target: null});
    }
  }
  if (r.held > 0) {
    out.push({label: "Held up", text: r.held === 1 ? "1 item waited for this or was created by it"
      : r.held + " items waited for this or were created by it", target: r.next, forward: true});
  }
  return out;
}
// every record's link rows, once their lookup files are loaded (for tests: Promise of
// {id: [[label, text, target], ...]})
function linkRowsOf(ids) {
  return new Promise(function (done) {
    withRecords(ids, function () {
      var more = [];
      ids.forEach(function (id) { var r = record(id); if (r) more.push(r.pred, r.next); });
      withRecords(more, function () {
        var out = {};
        ids.forEach(function (id) {
          var r = record(id);
          out[id] = r ? linkFields(r).map(function (f) { return [f.label, f.text, f.target]; }) : null;
        });
        done(out);
      });
    });
  });
}

// ---- selection, details, walking ---------------------------------------------------------------
function setStatus(text) {
  CRIT.status = text;
  var el = document.getElementById("crit-status");
  if (el) { el.textContent = text; el.title = text; }  // (whole on hover where it is cut)
}
function select(r) {
  CRIT.sel = r;
  showDetails(r);
  view.requestDraw();
}
// the details panel of the selected item: where it is, its times, and its critical links
function showDetails(r) {
  var el = document.getElementById("details"), rows = [];
  el.textContent = "";
  if (!r) { el.textContent = "click a box for its details"; return; }
  var L = CRIT.lanes[r.lane] || {};
  var prov = META.provenances[r.prov];
  rows.push(["Title", titleOf(r)], ["Lane", "Rank " + L.rank + " · " + L.panel + " · " + L.name + (L.long ? " — " + L.long : "")],
    ["Start", formatUs(r.start)], ["Stop", formatUs(r.stop)], ["Duration", formatUs(r.stop - r.start)]);
  timeSplit(r.waited, r.calls, r.stop - r.start).forEach(function (x) { rows.push([x[0], formatUs(x[1])]); });  // (as its tooltip splits it)
  if (prov) rows.push(["Provenance", prov]);
  var t = document.createElement("table");
  rows.forEach(function (x) { t.appendChild(detailRow(x[0], x[1])); });
  withRecords([r.id], function () {
    var rec = record(r.id);
    if (!critMeta().available) { t.appendChild(detailRow("Critical path", "not in this report: " + critMeta().why)); return; }
    if (!rec) { t.appendChild(detailRow("Critical path", "not in this report's lookup files (too many items; `legate_prof critical FILES --json` lists every item's)")); return; }
    withRecords([rec.pred, rec.next], function () {
      if (CRIT.sel && CRIT.sel.id !== r.id) return;  // another item was selected meanwhile
      linkFields(rec).forEach(function (f) {
        var tr = detailRow(f.label, f.target === null ? f.text : null);
        if (f.target !== null) {
          var a = document.createElement("a");
          a.href = "#"; a.textContent = f.text; a.className = "link";
          a.title = f.forward ? "go to the first of them (])" : "go to it ([)";
          a.addEventListener("click", function (ev) { ev.preventDefault(); goToItem(f.target); });
          tr.lastChild.appendChild(a);
        }
        t.appendChild(tr);
      });
    });
  });
  el.appendChild(t);
}
function detailRow(label, text) {
  var tr = document.createElement("tr"), th = document.createElement("th"), td = document.createElement("td");
  th.textContent = label;
  if (text !== null) td.textContent = text;
  tr.appendChild(th); tr.appendChild(td);
  return tr;
}
// select an item by id: its lane opened and scrolled to, the view following it
function goToItem(id, said) {
  withRecords([id], function () {
    var r = record(id);
    if (!r) { setStatus("item " + id + " is not in this report's lookup files"); return; }
    CRIT.back.push({sel: CRIT.sel, t0: view.t0, t1: view.t1, scrollY: view.scrollY});
    if (CRIT.back.length > 1000) CRIT.back.shift();
    revealLane(r.lane);
    follow(r.start, r.stop);
    select(r);
    if (said) setStatus(said);
  });
}
// Ctrl+Z / Backspace after a walk or a followed link: the item selected and the view before it
function goBack() {
  var b = CRIT.back.pop();
  if (!b) { setStatus("nothing to go back to (Ctrl+Z / Backspace undo the walks and followed links)"); return; }
  view.setRange(b.t0, b.t1);
  view.scroll(b.scrollY - view.scrollY);
  CRIT.sel = b.sel;
  showDetails(b.sel);
  view.requestDraw();
  setStatus(b.sel ? "back to " + titleOf(b.sel) : "back to the view before the walk");
}
function revealLane(lane) {
  var L = CRIT.lanes[lane];
  if (L && L.ref && !L.ref.expanded) { L.ref.expanded = true; view.layout = buildLayout(); }
  var e = view.layout.byLane[lane];
  if (!e) return;
  var top = e.y * view.rowPx, vis = view.H - AXIS_PX;
  if (top < view.scrollY || top + e.h * view.rowPx > view.scrollY + vis) view.scroll(top - view.scrollY - 3 * view.rowPx);
}
// as the desktop's follow_item: stay where the item is in the view, else centre it (zoom
// kept) where it fits, else zoom out to it
function follow(a, b) {
  var span = view.t1 - view.t0;
  if (a >= view.t0 && b <= view.t1) return;
  if (b - a <= 0.6 * span) { var c = (a + b) / 2; view.setRange(c - span / 2, c + span / 2); }
  else { var d = Math.max(b - a, 1000); view.setRange(a - 0.25 * d, b + 0.25 * d); }
}
// while the path is drawn and the selected item is on it: the step before (after) it on the
// drawn path, as the desktop's step_on_path; false where the item is not on it
function walkPath(sel, forward) {
  var p = CRIT.path, m = critMeta();
  if (!CRIT.shown || !p || !CRIT.pathSet[sel.id]) return false;
  var n = p.item.length, total = m.steps, at = CRIT.pathAt;
  if (at === undefined || at === null || p.item[at] !== sel.id)
    at = forward ? p.item.lastIndexOf(sel.id) : p.item.indexOf(sel.id);
  var nxt = forward ? at - 1 : at + 1, num = function (k) { return total - k; };
  CRIT.pathAt = at;
  if (nxt < 0) { setStatus(titleOf(sel) + ": step " + total + " of " + total + " of the critical path, its last (it ended last)"); return true; }
  if (nxt >= n) {
    var unknown = m.path_via[p.via[n - 1]] === "unknown";
    setStatus(titleOf(sel) + ": step " + num(at) + " of " + total + " of the critical path, " +
              (n < total ? "the first this report keeps (legate_prof critical lists all)" :
               "its first" + (unknown ? ": the chain stops at an event no loaded profile records (unknown)" : "")));
    return true;
  }
  var j = p.item[nxt], via = m.path_via[p.via[Math.min(at, nxt)]], verb = (m.path_via_words || {})[via] || via;  // (query.run_path.PATH_VIA_WORDS)
  withRecords([j], function () {
    var r = record(j), tj = r ? titleOf(r) : "item " + j, ti = titleOf(sel);
    var step = "step " + num(nxt) + " of " + total + " of the critical path: " + tj;
    var none = p.end[nxt] <= p.begin[nxt] ? "; it holds no time on the path: the step it led to had begun by the time it ran" : "";
    goToItem(j, (forward ? "→ " + step + " (it " + verb + " " + ti + ")" : "← " + step + " (" + ti + " " + verb + " it)") + none);
    CRIT.pathAt = nxt;
  });
  return true;
}
function walk(forward) {
  var sel = CRIT.sel;
  if (!critMeta().available) { setStatus("no critical path in this report: " + critMeta().why); return; }
  if (!sel) { setStatus("select an item first: [ walks back to what it waited for, ] forward to what it held up"); return; }
  if (walkPath(sel, forward)) return;
  withRecords([sel.id], function () {
    var r = record(sel.id);
    if (!r) { setStatus(titleOf(sel) + ": not in this report's lookup files"); return; }
    withRecords([r.pred, r.next], function () {
      var f = linkFields(r).filter(function (x) { return !!x.forward === !!forward; })[0];
      if (!forward) {
        if (!f) { setStatus(titleOf(r) + ": no critical predecessor (calls, kernels and the top-level task have none)"); return; }
        if (f.target === null) { setStatus(f.label + ": " + f.text + (f.text.indexOf("stops here") >= 0 ? "" : ": the chain stops here") + " (unknown)"); return; }
        goToItem(f.target, "← " + f.label + ": " + f.text);
      } else {
        if (!f) { setStatus(titleOf(r) + ": nothing waited for it or was created by it (the chain ends)"); return; }
        goToItem(f.target, "→ " + labelOf(f.target) + (r.held > 1 ? "; the first of " + r.held + " it held up" : ""));
      }
    });
  });
}
function pathSummary() {
  var p = CRIT.path, m = critMeta(), n = p.item.length;
  var said = ((META.critical_split || {}).header || []).filter(function (h) { return h.indexOf("Critical path: none") === 0; })[0];
  if (!m.steps && said) return said.charAt(0).toLowerCase() + said.slice(1);  // (why there is none: `critical`'s words)
  var stops = n && m.path_via[p.via[n - 1]] === "unknown" ? "; it stops at an event no loaded profile records (unknown)" : "";
  // the span of the steps drawn; of the whole path where only its last steps are written (the
  // split's span: the whole path's, as `legate_prof critical` says it)
  var drawn = n ? p.end[0] - p.begin[n - 1] : 0, split = META.critical_split || {};
  var whole = m.steps > n && split.span_ns ? split.span_ns : drawn;
  var part = m.steps > n ? "; its last " + n.toLocaleString("en-US") + " steps drawn (its last " + formatNs(drawn) + ")" : "";
  var dense = CRIT.dense ? "; too many in view to draw their links: zoom in to see them" : "";
  return "critical path: " + m.steps.toLocaleString("en-US") + " steps over " + formatNs(whole) + part + stops + dense;
}
function togglePath(on) {
  var m = critMeta();
  if (!m.available) { setStatus("no critical path in this report: " + m.why); return; }
  CRIT.shown = on === undefined ? !CRIT.shown : on;
  document.getElementById("path-toggle").classList.toggle("on", CRIT.shown);
  if (CRIT.shown && !CRIT.path && !CRIT.loading) { CRIT.loading = true; loadScript("path.js"); }
  setStatus(!CRIT.shown ? "critical path hidden" : CRIT.path ? pathSummary() : "loading the critical path…");
  view.requestDraw();
}

// ---- drawing -----------------------------------------------------------------------------------
// where a step sits: its lane's row, else its group's utilization row, else its rank's header
function stepPlace(v, lane, row) {
  var e = v.layout.byLane[lane], L = CRIT.lanes[lane];
  if (e) {
    var rh = e.h / e.rows;
    return [AXIS_PX + (e.y + (Math.min(row, e.rows - 1) + 0.5) * rh) * v.rowPx - v.scrollY, rh * v.rowPx / 2];
  }
  e = L ? (v.layout.bySummary[L.rank + ":" + L.group] || v.layout.byHeader[L.rank]) : null;
  return e ? [AXIS_PX + (e.y + e.h / 2) * v.rowPx - v.scrollY, e.h * v.rowPx / 4] : null;
}
function drawCritical(v, nsPx) {
  var ctx = v.ctx;
  if (CRIT.shown && CRIT.path) drawPath(v, ctx, nsPx);
  var s = CRIT.sel;
  if (!s) return;
  var at = stepPlace(v, s.lane, s.row);
  if (!at || !v.layout.byLane[s.lane]) return;
  var a = (s.start - v.t0) / nsPx, b = (s.stop - v.t0) / nsPx;
  ctx.strokeStyle = "rgb(220,0,0)"; ctx.lineWidth = 2;
  ctx.strokeRect(a - 1, at[0] - at[1], Math.max(b - a, 3) + 2, 2 * at[1]);
}
// more steps in view than one per this many pixels: their boxes only, no links between them
// (20,000 links zigzagging between lanes covered every lane with the path's colour)
var DENSE_PX_PER_STEP = 3;
function stepsInView(v) {
  var p = CRIT.path, n = p.item.length, count = 0;
  for (var k = 0; k < n; k++) if (p.end[k] >= v.t0 && p.begin[k] <= v.t1) count++;
  return count;
}
function drawPath(v, ctx, nsPx) {
  var p = CRIT.path, n = p.item.length, rects = [], lines = [], place = {};
  var dense = stepsInView(v) * DENSE_PX_PER_STEP > v.W;
  if (CRIT.dense !== dense) {  // (the summary says so; a walk's own words stay)
    CRIT.dense = dense;
    if ((CRIT.status || "").indexOf("critical path:") === 0) setStatus(pathSummary());
  }
  function at(k) { if (!(k in place)) place[k] = stepPlace(v, p.lane[k], p.row[k]); return place[k]; }
  for (var k = 0; k < n; k++) {
    var from = k + 1 < n ? p.end[k + 1] : p.begin[k];
    if (p.end[k] < v.t0 || Math.min(p.begin[k], from) > v.t1) continue;
    var here = at(k);
    if (!here) continue;
    var a = (p.begin[k] - v.t0) / nsPx, b = (p.end[k] - v.t0) / nsPx, half = Math.max(here[1], 2);
    rects.push([a - 1, here[0] - half, Math.max(b - a, 3) + 2, 2 * half]);
    var before = k + 1 < n && !dense ? at(k + 1) : null;
    if (before) {
      var x0 = (from - v.t0) / nsPx, y0 = before[0];
      if (Math.abs(y0 - here[0]) > 1 || Math.abs(x0 - a) > 4) lines.push([x0, y0, a, here[0]]);
    }
  }
  ctx.save();
  ctx.beginPath(); ctx.rect(0, AXIS_PX, v.W, v.H - AXIS_PX); ctx.clip();
  (dense ? [[PATH_COLOR, 1.5]] : [[HALO, 4.5], [PATH_COLOR, 2]]).forEach(function (st) {
    ctx.strokeStyle = st[0]; ctx.lineWidth = st[1];
    rects.forEach(function (r) { ctx.strokeRect(r[0], r[1], r[2], r[3]); });
    ctx.beginPath();
    lines.forEach(function (l) { ctx.moveTo(l[0], l[1]); ctx.lineTo(l[2], l[3]); });
    ctx.stroke();
  });
  ctx.fillStyle = PATH_COLOR;
  lines.forEach(function (l) {
    var dx = l[2] - l[0], dy = l[3] - l[1], len = Math.sqrt(dx * dx + dy * dy);
    if (len < 14) return;
    var ang = Math.atan2(dy, dx);
    ctx.beginPath(); ctx.moveTo(l[2], l[3]);
    ctx.lineTo(l[2] + 7 * Math.cos(ang + Math.PI - 0.45), l[3] + 7 * Math.sin(ang + Math.PI - 0.45));
    ctx.lineTo(l[2] + 7 * Math.cos(ang + Math.PI + 0.45), l[3] + 7 * Math.sin(ang + Math.PI + 0.45));
    ctx.closePath(); ctx.fill();
  });
  var last = n - 1;
  if (n && critMeta().path_via[p.via[last]] === "unknown" && p.end[last] >= v.t0 && p.begin[last] <= v.t1 && at(last)) {
    var x = (p.begin[last] - v.t0) / nsPx, y = at(last)[0];
    ctx.font = "bold 11px sans-serif";
    var w = ctx.measureText("unknown ▸").width + 8;
    ctx.fillRect(x - w - 3, y - 8, w, 16);
    ctx.fillStyle = "#fff"; ctx.textBaseline = "middle"; ctx.fillText("unknown ▸", x - w + 1, y);
  }
  ctx.restore();
}

// ---- wiring ------------------------------------------------------------------------------------
function setupCritical() {
  var m = critMeta();
  (m.chunks || []).forEach(function (c) { CRIT.listed[c] = true; });
  META.tree.forEach(function (r) {
    r.groups.forEach(function (g) {
      g.lanes.forEach(function (L) { CRIT.lanes[L.lane] = {name: L.name, long: L.long, group: g.group, panel: g.title, rank: r.rank, ref: g}; });
    });
  });
  showDetails(null);
  var cv = view.canvas, tl = document.getElementById("timeline"), down = null;
  cv.addEventListener("mousedown", function (ev) { down = [ev.clientX, ev.clientY]; });
  cv.addEventListener("click", function (ev) {
    if (down && Math.abs(ev.clientX - down[0]) + Math.abs(ev.clientY - down[1]) > 4) return;  // a drag
    var h = view.hit(ev.offsetX, ev.offsetY);
    if (!h || h.kind !== "item") return;
    select({id: h.id, lane: h.entry.lane, row: h.row, start: h.start, stop: h.start + h.dur, name: h.name, prov: h.prov, waited: h.waited, calls: h.calls});
  });
  tl.addEventListener("keydown", function (ev) {
    var undo = (ev.ctrlKey || ev.metaKey) && !ev.shiftKey && !ev.altKey && (ev.key === "z" || ev.key === "Z");
    if (undo || (ev.key === "Backspace" && !ev.ctrlKey && !ev.metaKey && !ev.altKey)) { goBack(); ev.preventDefault(); return; }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key === "[") walk(false);
    else if (ev.key === "]") walk(true);
    else if (ev.key === "p" || ev.key === "P") togglePath();
    else return;
    ev.preventDefault();
  });
  var btn = document.getElementById("path-toggle");
  btn.addEventListener("click", function () { togglePath(); });
  if (!m.available) btn.title = "no critical path in this report: " + m.why;
}
