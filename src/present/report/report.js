(function () {
  'use strict';
  var check = {ok: false, errors: [], lanes: 0, rows: 0, slices: 0, marks: 0, draws: 0, series: 0,
               points: 0, kinds: [0, 0, 0, 0, 0, 0, 0, 0, 0], onPath: 0, names: 0, sorted: 0, pmSeries: 0,
               pmPoints: 0, pmCharts: 0, pmDrawn: 0};
  var out = document.getElementById('gfl-selfcheck');
  function report() { check.ok = check.errors.length === 0 && check.draws > 0; out.textContent = JSON.stringify(check); }
  window.addEventListener('error', function (e) { check.errors.push(String(e.message || e)); report(); });

  var KIND = ['kernel', 'copy', 'memset', 'scope', 'NVTX range', 'NVTX mark', 'sync', 'trace window', 'trigger'];
  var TRIGGER = 8;
  var COLOR = ['#3572b0', '#dd8a1e', '#8e5cc4', '#2a9d8f', '#6b8e23', '#d1495b', '#8a8f98', '#e9c46a', '#c1121f'];
  var LW = 180, RH = 14, GH = 18, AH = 20, CH = 64;
  var D, lanes = [], series = [], pm = [], chartPts = 0, v0 = 0, v1 = 1, wall = 1, W = 1200, drawn = [], pending = false;
  var tl = document.getElementById('tl'), charts = document.getElementById('charts');
  var tip = document.getElementById('tip');
  var SVGNS = 'http://www.w3.org/2000/svg';

  function fmt(ns) {
    var a = Math.abs(ns);
    if (a < 1e3) return Math.round(ns) + ' ns';
    if (a < 1e6) return (ns / 1e3).toFixed(2) + ' us';
    if (a < 1e9) return (ns / 1e6).toFixed(2) + ' ms';
    return (ns / 1e9).toFixed(3) + ' s';
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c];
    });
  }
  function hue(s) {
    var h = 0;
    for (var i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
    return 'hsl(' + (190 + Math.abs(h) % 70) + ',55%,' + (38 + Math.abs(h >> 8) % 14) + '%)';
  }
  function lowerBound(a, x) {
    var lo = 0, hi = a.length;
    while (lo < hi) { var m = (lo + hi) >> 1; if (a[m] < x) lo = m + 1; else hi = m; }
    return lo;
  }
  function X(t) { return LW + (t - v0) * (W - LW) / (v1 - v0); }

  function decode() {
    D = JSON.parse(document.getElementById('gfl-data').textContent);
    wall = Math.max(D.wall, 1); v0 = 0; v1 = wall;
    check.names = D.names.length;
    D.lanes.forEach(function (l) {
      var lane = {g: l.g, l: l.l, t: l.t, items: l.items, o: l.o, rows: []};
      l.rows.forEach(function (r) {
        var n = r.s.length, s = new Float64Array(n), t = 0, maxDur = 0;
        for (var i = 0; i < n; i++) {
          t += r.s[i]; s[i] = t;
          if (r.d[i] > maxDur) maxDur = r.d[i];
          /* the critical path's lane repeats work of the stream lanes: counted apart */
          if (l.t === 'critpath') check.onPath += r.c ? r.c[i] : 1;
          else check.kinds[D.nk[r.n[i]]] += r.c ? r.c[i] : 1;
        }
        check.slices += n;
        lane.rows.push({s: s, d: r.d, n: r.n, c: r.c || null, b: r.b || null, maxDur: maxDur});
      });
      check.rows += lane.rows.length;
      lanes.push(lane);
    });
    check.lanes = lanes.length;
    D.series.forEach(function (s) {
      var t = new Float64Array(s.t.length), acc = 0;
      for (var i = 0; i < s.t.length; i++) { acc = s.t[i]; t[i] = acc; }
      check.points += s.t.length;
      series.push({label: s.label, t: t, memTotal: s.memTotal,
                   m: [['utilization', '%', s.util, 100], ['memory used', 'MiB', s.mem, 0],
                       ['power', 'W', s.power, 0], ['temperature', 'C', s.temp, 0]]});
    });
    check.series = series.length;
    (D.pm || []).forEach(function (p) {
      check.pmPoints += p.t.length;
      pm.push({dev: p.dev, label: p.label, metric: p.metric, unit: p.unit, mean: p.mean, max: p.max,
               samples: p.samples, t: Float64Array.from(p.t), v: p.v});
    });
    check.pmSeries = pm.length;
  }

  /* A PM metric's value in its unit (the metric's name gives it). */
  function pmValue(v, unit) {
    if (unit === 'pct') return v.toFixed(1) + ' %';
    if (unit === 'raw') return String(+v.toPrecision(4));
    var p = ['', 'k', 'M', 'G', 'T', 'P'], i = 0;
    while (i + 1 < p.length && Math.abs(v) >= 1000) { v /= 1000; i++; }
    return (+v.toPrecision(3)) + ' ' + p[i] + (unit === 'bytes_per_second' ? 'B/s' : '/s');
  }

  function notes() {
    var p = [];
    if (D.q > 0)
      p.push('This session has ' + D.items + ' slices: to keep the page light, slices shorter than ' + fmt(D.q) +
             ' that follow each other within ' + fmt(D.q) + ' are merged into ' + D.kept +
             ' marks (a tooltip says how many slices a mark holds).');
    lanes.forEach(function (l) {
      if (l.o > 0)
        p.push(l.g + ' ' + l.l + ': ' + l.o + ' slices overlap more than ' + D.maxRows +
               ' deep and are drawn over its last row.');
    });
    p.push('Wheel or the buttons zoom, drag pans, double-click resets; marks narrower than a pixel are merged at every zoom.');
    var el = document.getElementById('tl-note');
    el.textContent = '';
    p.forEach(function (s) { var d = document.createElement('div'); d.textContent = s; el.appendChild(d); });
  }

  var svg, plot, axis, lay = [], height = 0;
  function layout() {
    W = Math.max(tl.clientWidth || 1200, LW + 200);
    lay = []; var y = AH, lastG = null, labels = '';
    lanes.forEach(function (l) {
      if (l.g !== lastG) {
        labels += '<text class="grp" x="4" y="' + (y + 13) + '">' + esc(l.g) + '</text>';
        labels += '<line x1="0" x2="' + W + '" y1="' + (y + 0.5) + '" y2="' + (y + 0.5) + '" stroke="#c9ced8"/>';
        y += GH; lastG = l.g;
      }
      labels += '<text class="lbl" x="14" y="' + (y + 11) + '">' + esc(l.l) + '</text>';
      l.rows.forEach(function (r, i) { lay.push({lane: l, row: r, y: y + i * RH}); });
      y += Math.max(l.rows.length, 1) * RH + 4;
    });
    height = y + 4;
    tl.innerHTML = '<svg xmlns="' + SVGNS + '" width="' + W + '" height="' + height + '"><g>' + labels +
      '</g><g id="tl-axis"></g><g id="tl-plot"></g></svg>';
    svg = tl.firstChild; plot = svg.querySelector('#tl-plot'); axis = svg.querySelector('#tl-axis');
    bind();
  }

  function ticks() {
    var span = v1 - v0, want = (W - LW) / 110, raw = span / Math.max(want, 1);
    var p = Math.pow(10, Math.floor(Math.log10(raw))), step = p;
    [1, 2, 5, 10].some(function (m) { step = m * p; return m * p >= raw; });
    var h = '', first = Math.ceil(v0 / step) * step;
    for (var t = first; t <= v1; t += step) {
      var x = X(t).toFixed(1);
      h += '<line x1="' + x + '" x2="' + x + '" y1="' + (AH - 5) + '" y2="' + height + '" stroke="#eef0f4"/>' +
           '<text class="axis" x="' + (+x + 2) + '" y="' + (AH - 7) + '">' + esc(fmt(t)) + '</text>';
    }
    return h;
  }

  /* hl: the critical path's lane (its slices outlined) */
  function drawRow(r, y, parts, hl) {
    var s = r.s, d = r.d, n = r.n, c = r.c, b = r.b, N = s.length, edge = hl ? '" stroke="#d62728" stroke-width="1.5' : '';
    var i = lowerBound(s, v0 - r.maxDur), bucket = null;
    function flush() {
      if (!bucket) return;
      var m = drawn.length; drawn.push(bucket);
      var w = Math.max(bucket.x1 - bucket.x0, 1), x = bucket.x0;
      var op = Math.max(0.35, Math.min(1, bucket.busy / Math.max(bucket.span, 1)));
      if (bucket.kind === TRIGGER) { x -= 2; w += 4; op = 1; } /* an instant that must be seen */
      parts.push('<rect data-m="' + m + '" x="' + x.toFixed(1) + '" y="' + (y + 1) + '" width="' + w.toFixed(1) +
                 '" height="' + (RH - 2) + '" fill="' + COLOR[bucket.kind] + '" fill-opacity="' + op.toFixed(2) + edge + '"/>');
      bucket = null;
    }
    for (; i < N && s[i] <= v1; i++) {
      var e = s[i] + d[i];
      if (e < v0) continue;
      var x0 = Math.max(X(s[i]), LW), x1 = Math.min(X(e), W), kind = D.nk[n[i]], cnt = c ? c[i] : 1;
      var busy = b ? b[i] : d[i];
      if (x1 - x0 < 1 || cnt > 1) {
        if (bucket && x0 <= bucket.x1 + 0.5) {
          if (bucket.kind !== kind) bucket.mixed = true;
          bucket.x1 = Math.max(bucket.x1, x1); bucket.i1 = i + 1; bucket.count += cnt; bucket.busy += busy;
          if (cnt > 1) bucket.premerged = true;
          bucket.span = Math.max(bucket.span, e - bucket.t0);
          if (d[i] > bucket.longest) { bucket.longest = d[i]; bucket.name = n[i]; }
          continue;
        }
        flush();
        bucket = {row: r, i0: i, i1: i + 1, x0: x0, x1: Math.max(x1, x0 + 1), kind: kind, count: cnt, busy: busy,
                  t0: s[i], span: d[i], longest: d[i], name: n[i], premerged: cnt > 1};
        continue;
      }
      flush();
      var m = drawn.length, w = x1 - x0, nm = D.names[n[i]];
      drawn.push({row: r, i0: i, i1: i + 1, kind: kind, count: 1, busy: d[i], t0: s[i], span: d[i], name: n[i]});
      parts.push('<rect data-m="' + m + '" x="' + x0.toFixed(1) + '" y="' + (y + 1) + '" width="' + w.toFixed(1) +
                 '" height="' + (RH - 2) + '" fill="' + (kind === 0 ? hue(nm) : COLOR[kind]) + edge + '"/>');
      if (w > 40) {
        var chars = Math.floor((w - 6) / 6);
        parts.push('<text class="sl" x="' + (x0 + 3).toFixed(1) + '" y="' + (y + 11) + '">' +
                   esc(nm.length > chars ? nm.slice(0, Math.max(chars - 1, 1)) + '\u2026' : nm) + '</text>');
      }
    }
    flush();
  }

  /* One chart: vals (null: none) at times t on the timeline's axis, scaled
   * to max, decimated to a min and max per pixel column; attrs say which
   * series it is, for the tooltip. '' when no value is in view. */
  function chart(vals, t, title, sub, max, attrs) {
    var pts = [], lo = Math.max(lowerBound(t, v0) - 1, 0), hi = Math.min(lowerBound(t, v1) + 1, t.length);
    var px = -1, mn = 0, mx = 0;
    function put() { pts.push(px.toFixed(1) + ',' + (CH - 4 - mn * (CH - 16) / max).toFixed(1));
                     if (mx !== mn) pts.push(px.toFixed(1) + ',' + (CH - 4 - mx * (CH - 16) / max).toFixed(1)); }
    for (var j = lo; j < hi; j++) {
      if (vals[j] === null) continue;
      var x = Math.round(Math.max(LW, Math.min(W, X(t[j]))));
      if (x !== px) { if (px >= 0) put(); px = x; mn = mx = vals[j]; }
      else { mn = Math.min(mn, vals[j]); mx = Math.max(mx, vals[j]); }
    }
    if (px >= 0) put();
    chartPts = pts.length;
    return '<svg xmlns="' + SVGNS + '" width="' + W + '" height="' + CH + '" ' + attrs + '><text class="lbl" x="4" y="14">' +
           esc(title) + '</text><text class="axis" x="4" y="28">' + esc(sub) + '</text><line x1="' + LW + '" x2="' + W +
           '" y1="' + (CH - 4) + '" y2="' + (CH - 4) + '" stroke="#c9ced8"/><polyline fill="none" stroke="#2b6cb0" ' +
           'stroke-width="1.2" points="' + pts.join(' ') + '"/></svg>';
  }

  /* A PM metric's chart title: its counter (the name up to the first
   * dot), cut to fit the label column; the tooltip has the whole name. */
  function pmTitle(metric) {
    var c = metric.split('.')[0];
    return c.length > 28 ? c.slice(0, 27) + '\u2026' : c;
  }

  function drawCharts() {
    var h = '';
    series.forEach(function (s, si) {
      h += '<div class="note">' + esc(s.label) + '</div>';
      s.m.forEach(function (m, k) {
        var vals = m[2], any = false, peak = 0;
        for (var i = 0; i < vals.length; i++) if (vals[i] !== null) { any = true; if (vals[i] > peak) peak = vals[i]; }
        if (!any) return;
        h += chart(vals, s.t, m[0], 'peak ' + (+peak.toFixed(1)) + ' ' + m[1] +
                   (m[1] === 'MiB' && s.memTotal ? ' (of ' + Math.round(s.memTotal) + ' MiB)' : ''),
                   m[3] || peak * 1.1 || 1, 'data-s="' + si + '" data-k="' + k + '"');
      });
    });
    if (!series.length) h = '<div class="note">No NVML samples were recorded (no utilization, memory, power or temperature).</div>';
    var lastDev = null;
    check.pmCharts = check.pmDrawn = 0;
    pm.forEach(function (p, pi) {
      if (p.dev !== lastDev) { h += '<div class="note">' + esc(p.label) + ': PM sampling</div>'; lastDev = p.dev; }
      var max = p.unit === 'pct' ? Math.max(100, p.max) : p.max * 1.1 || 1;
      h += chart(p.v, p.t, pmTitle(p.metric), 'mean ' + pmValue(p.mean, p.unit) + ', max ' + pmValue(p.max, p.unit),
                 max, 'data-p="' + pi + '"');
      check.pmCharts++;
      check.pmDrawn += chartPts;
    });
    charts.innerHTML = h;
  }

  function draw() {
    pending = false;
    drawn = [];
    var parts = [];
    lay.forEach(function (e) { drawRow(e.row, e.y, parts, e.lane.t === 'critpath'); });
    axis.innerHTML = ticks();
    plot.innerHTML = parts.join('');
    check.marks = drawn.length;
    check.draws++;
    report();
    document.getElementById('tl-range').textContent = fmt(v0) + ' \u2013 ' + fmt(v1) + ' (' + fmt(v1 - v0) + ' shown)';
    drawCharts();
  }
  function redraw() { if (!pending) { pending = true; requestAnimationFrame(draw); } }

  function zoom(f, at) {
    var span = (v1 - v0) * f;
    if (span < 1000) span = 1000;
    if (span > wall) span = wall;
    var frac = (at - v0) / (v1 - v0);
    v0 = at - frac * span; v1 = v0 + span;
    if (v0 < 0) { v0 = 0; v1 = span; }
    if (v1 > wall) { v1 = wall; v0 = wall - span; }
    redraw();
  }
  function timeAt(clientX) {
    var rect = svg.getBoundingClientRect();
    return v0 + (clientX - rect.left - LW) * (v1 - v0) / (W - LW);
  }

  function showTip(ev, text) {
    tip.textContent = text; tip.style.display = 'block';
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = Math.max(0, ev.clientX - tip.offsetWidth - 10);
    if (y + tip.offsetHeight > window.innerHeight) y = Math.max(0, ev.clientY - tip.offsetHeight - 10);
    tip.style.left = x + 'px'; tip.style.top = y + 'px';
  }
  function describe(m) {
    var r = m.row, name = D.names[m.name];
    if (m.kind === TRIGGER && m.count === 1 && m.i1 - m.i0 === 1)
      return KIND[m.kind] + ': ' + name + '\nat ' + fmt(r.s[m.i0]);
    if (m.count === 1 && m.i1 - m.i0 === 1)
      return KIND[m.kind] + ': ' + name + '\nstart ' + fmt(r.s[m.i0]) + '   duration ' + fmt(r.d[m.i0]);
    var head = m.count + ' ' + (m.mixed ? 'slices of several kinds' : KIND[m.kind] + (m.count > 1 ? 's' : '')) +
      ' merged\nfrom ' + fmt(m.t0) + ' over ' + fmt(m.span) + ', busy ' + fmt(m.busy) + ' (' +
      Math.round(100 * m.busy / Math.max(m.span, 1)) + '%)\n';
    if (m.premerged)
      return head + 'largest part: ' + name + '\nslices shorter than ' + fmt(D.q) + ' were merged when the report was made';
    return head + 'longest: ' + name + ' (' + fmt(m.longest) + ')\nzoom in to see them one by one';
  }

  var drag = null;
  function bind() {
    svg.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      zoom(Math.exp(ev.deltaY * 0.0015), Math.max(v0, Math.min(v1, timeAt(ev.clientX))));
    }, {passive: false});
    svg.addEventListener('mousedown', function (ev) { drag = {x: ev.clientX, v0: v0, v1: v1}; svg.classList.add('drag'); });
    svg.addEventListener('dblclick', function () { v0 = 0; v1 = wall; redraw(); });
    svg.addEventListener('mousemove', function (ev) {
      if (drag) {
        var dt = (ev.clientX - drag.x) * (drag.v1 - drag.v0) / (W - LW), span = drag.v1 - drag.v0;
        v0 = Math.max(0, Math.min(wall - span, drag.v0 - dt)); v1 = v0 + span;
        tip.style.display = 'none'; redraw(); return;
      }
      var m = ev.target.getAttribute && ev.target.getAttribute('data-m');
      if (m === null || m === undefined) { tip.style.display = 'none'; return; }
      showTip(ev, describe(drawn[+m]));
    });
    svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  }
  window.addEventListener('mouseup', function () { drag = null; if (svg) svg.classList.remove('drag'); });
  charts.addEventListener('mousemove', function (ev) {
    var el = ev.target.closest && ev.target.closest('svg');
    if (!el) { tip.style.display = 'none'; return; }
    var rect = el.getBoundingClientRect(), t = v0 + (ev.clientX - rect.left - LW) * (v1 - v0) / (W - LW);
    function nearest(ts) {
      var j = Math.min(lowerBound(ts, t), ts.length - 1);
      return j > 0 && t - ts[j - 1] < ts[j] - t ? j - 1 : j;
    }
    if (el.hasAttribute('data-p')) {
      var p = pm[+el.getAttribute('data-p')], i = nearest(p.t);
      showTip(ev, p.label + ' ' + p.metric + ' at ' + fmt(p.t[i]) + ': ' + pmValue(p.v[i], p.unit));
      return;
    }
    var s = series[+el.getAttribute('data-s')], m = s.m[+el.getAttribute('data-k')], j = nearest(s.t);
    showTip(ev, s.label + ' ' + m[0] + ' at ' + fmt(s.t[j]) + ': ' + (m[2][j] === null ? 'not reported' : m[2][j] + ' ' + m[1]));
  });
  charts.addEventListener('mouseleave', function () { tip.style.display = 'none'; });

  function sortable() {
    Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
      var ths = table.tHead.rows[0].cells;
      Array.prototype.forEach.call(ths, function (th, col) {
        th.addEventListener('click', function () {
          var desc = !th.classList.contains('desc'), body = table.tBodies[0];
          Array.prototype.forEach.call(ths, function (h) { h.classList.remove('asc', 'desc'); });
          th.classList.add(desc ? 'desc' : 'asc');
          var rows = Array.prototype.slice.call(body.rows);
          rows.sort(function (a, b) {
            var x = a.cells[col], y = b.cells[col], vx = x && x.getAttribute('data-v'), vy = y && y.getAttribute('data-v');
            var r = (vx !== null && vy !== null) ? (+vx) - (+vy) : (x ? x.textContent : '').localeCompare(y ? y.textContent : '');
            return desc ? -r : r;
          });
          rows.forEach(function (r) { body.appendChild(r); });
        });
      });
      check.sorted++;
    });
  }

  /* For the tests: drives the page as a user would (buttons, wheel, drag,
   * hover) and records what each did in the self-check. */
  function selftest() {
    var st = check.selftest = {};
    document.getElementById('zin').click(); draw();
    st.zoomInSpan = v1 - v0;
    document.getElementById('zreset').click(); draw();
    st.resetSpan = v1 - v0;
    var rect = svg.getBoundingClientRect(), cx = rect.left + LW + (W - LW) / 2, cy = rect.top + AH + 5;
    svg.dispatchEvent(new WheelEvent('wheel', {deltaY: -400, clientX: cx, clientY: cy, bubbles: true, cancelable: true}));
    draw();
    st.wheelSpan = v1 - v0; st.wheelMarks = drawn.length;
    var before = v0;
    svg.dispatchEvent(new MouseEvent('mousedown', {clientX: cx, clientY: cy, bubbles: true}));
    svg.dispatchEvent(new MouseEvent('mousemove', {clientX: cx - 200, clientY: cy, bubbles: true}));
    window.dispatchEvent(new MouseEvent('mouseup', {clientX: cx - 200, clientY: cy, bubbles: true}));
    draw();
    st.panned = v0 - before;
    document.getElementById('zreset').click(); draw();
    var r = plot.querySelector('rect');
    if (r) {
      var b = r.getBoundingClientRect();
      r.dispatchEvent(new MouseEvent('mousemove', {clientX: b.left + b.width / 2, clientY: b.top + b.height / 2, bubbles: true}));
      st.tip = tip.textContent;
    }
    var pc = charts.querySelector('svg[data-p]');
    if (pc) {
      var cb = pc.getBoundingClientRect();
      pc.dispatchEvent(new MouseEvent('mousemove', {clientX: cb.left + LW + (W - LW) / 2, clientY: cb.top + CH / 2, bubbles: true}));
      st.pmTip = tip.textContent;
    }
  }

  try {
    var began = performance.now();
    decode();
    notes();
    layout();
    document.getElementById('zin').onclick = function () { zoom(0.5, (v0 + v1) / 2); };
    document.getElementById('zout').onclick = function () { zoom(2, (v0 + v1) / 2); };
    document.getElementById('zreset').onclick = function () { v0 = 0; v1 = wall; redraw(); };
    window.addEventListener('resize', function () { layout(); redraw(); });
    draw();
    check.ms = Math.round(performance.now() - began);
    sortable();
    if (location.hash === '#gfl-selftest') selftest();
  } catch (e) {
    check.errors.push(String(e && e.stack || e));
  }
  report();
})();
