/* tripline report: draws the page from the JSON block. Every value from the data goes into the
   DOM with textContent or setAttribute, never as markup. Waterfalls are built when a finding is
   opened, and only the rows the scroller shows are in the DOM. */
(function () {
  'use strict';
  var DATA = JSON.parse(document.getElementById('tripline-data').textContent);
  var ROW_H = 22;
  var LABEL_W = 360;
  var BUFFER_ROWS = 30;
  var PRINT_ROWS = 60;
  var PRINT_FINDINGS = 200;
  var SEVERITIES = ['critical', 'error', 'warning', 'info'];
  var app = document.getElementById('app');
  var built = [];

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) {
      for (var k in attrs) {
        if (Object.prototype.hasOwnProperty.call(attrs, k) && attrs[k] !== null && attrs[k] !== undefined && attrs[k] !== false) {
          e.setAttribute(k, attrs[k] === true ? '' : String(attrs[k]));
        }
      }
    }
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function fmtNs(ns) {
    var ms = ns / 1e6;
    if (ms >= 1000) return (ms / 1000).toFixed(2) + ' s';
    if (ms >= 1) return ms.toFixed(1) + ' ms';
    return (ns / 1000).toFixed(0) + ' µs';
  }
  function fmtMs(v) { return v === null || v === undefined ? '–' : String(v); }
  function sevBadge(s) { return el('span', { 'class': 'sev sev-' + s }, s); }
  function table(parent, head) {
    var t = add(parent, el('table'));
    var tr = add(add(t, el('thead')), el('tr'));
    head.forEach(function (h) { add(tr, el('th', null, h)); });
    return add(t, el('tbody'));
  }
  function row(tbody, cells, attrs) {
    var tr = add(tbody, el('tr', attrs));
    cells.forEach(function (c) {
      if (c instanceof Node) { add(add(tr, el('td')), c); }
      else if (typeof c === 'number') { add(tr, el('td', { 'class': 'num' }, c)); }
      else { add(tr, el('td', null, c === null || c === undefined ? '–' : c)); }
    });
    return tr;
  }
  function notes(parent, list) {
    if (!list || !list.length) return;
    var ul = add(parent, el('ul', { 'class': 'notes' }));
    list.forEach(function (n) { add(ul, el('li', null, n)); });
  }

  // ---- header -------------------------------------------------------------------------------
  var ctx = DATA.context;
  add(app, el('h1', null, 'tripline report'));
  add(app, el('p', { 'class': 'meta-line' }, 'data dir ' + ctx.data_dir +
    (ctx.policy ? ' · policy ' + ctx.policy : ' · no policy file') +
    (ctx.filters.length ? ' · ' + ctx.filters.join(' ') : '') + ' · generated ' + ctx.generated));
  if (DATA.scanned_summary) add(app, el('p', { 'class': 'meta-line', id: 'scanned' }, DATA.scanned_summary));
  if (DATA.scanned && DATA.scanned.unreadable_files.length) {
    var ur = add(app, el('ul', { 'class': 'notes' }));
    DATA.scanned.unreadable_files.forEach(function (u) { add(ur, el('li', null, 'unreadable, skipped: ' + u.path + ': ' + u.error)); });
  }
  var nav = add(app, el('nav'));
  [['#findings', 'Findings'], ['#coverage', 'Coverage'], ['#tools', 'Tools'], ['#conversations', 'Conversations']]
    .forEach(function (l) { add(nav, el('a', { href: l[0] }, l[1])); });
  var counts = add(app, el('div', { 'class': 'counts' }));
  // Counts over every finding of the check; the list below may be capped (DATA.capped says so).
  var total = 0;
  var countOf = {};
  DATA.counts.forEach(function (c) { total += c.findings; countOf[c.rule] = c; });
  SEVERITIES.forEach(function (s) {
    var n = 0;
    DATA.counts.forEach(function (c) { if (c.severity === s) n += c.findings; });
    var c = add(counts, el('span', { 'data-count': s }));
    add(c, sevBadge(s)); c.appendChild(document.createTextNode(' ' + n));
  });

  // ---- findings by severity, then rule --------------------------------------------------------
  var rules = {};
  DATA.rules.forEach(function (r) { rules[r.code] = r; });
  var fsec = add(app, el('section', { id: 'findings' }));
  add(fsec, el('h2', null, 'Findings (' + total +
    (DATA.findings.length < total ? ', ' + DATA.findings.length + ' listed' : '') + ')'));
  if (DATA.capped.length) {
    var cap = add(fsec, el('div', { 'class': 'capped', id: 'capped' }));
    add(cap, el('p', null, 'This page does not list everything the check found:'));
    notes(cap, DATA.capped);
  }
  if (!total) {
    add(fsec, el('p', null, 'No findings. Check the coverage below: a rule that examined nothing is not evidence of health.'));
  }
  notes(fsec, DATA.view_notes);
  SEVERITIES.forEach(function (sev) {
    var order = [];
    var groups = {};
    DATA.findings.forEach(function (f, i) {
      if (f.severity !== sev) return;
      if (!groups[f.rule]) { groups[f.rule] = []; order.push(f.rule); }
      groups[f.rule].push(i);
    });
    order.forEach(function (code) {
      var r = rules[code] || { code: code, name: '', explain: '' };
      var g = add(fsec, el('section', { 'class': 'rule-group', 'data-rule': code, 'data-severity': sev }));
      var h = add(g, el('h3'));
      add(h, sevBadge(sev));
      var n = countOf[code] ? countOf[code].findings : groups[code].length;
      h.appendChild(document.createTextNode(' ' + code + ' ' + r.name + ' · ' + n +
        (n === 1 ? ' finding' : ' findings')));
      if (countOf[code] && countOf[code].note) add(g, el('p', { 'class': 'capped-rule' }, countOf[code].note));
      if (r.explain) {
        var ex = add(g, el('details', { 'class': 'explain' }));
        add(ex, el('summary', null, 'What it detects, why it matters, how to fix (tripline explain ' + code + ')'));
        add(ex, el('pre', null, r.explain));
      }
      groups[code].forEach(function (i) { add(g, findingElement(DATA.findings[i], i)); });
    });
  });

  function findingElement(f, i) {
    var d = el('details', {
      'class': 'finding', id: 'finding-' + i, 'data-finding': i, 'data-rule': f.rule,
      'data-severity': f.severity, 'data-trace-id': f.trace_id, 'data-span-id': f.span_id
    });
    var s = add(d, el('summary'));
    add(s, el('span', { 'class': 'tag mono' }, f.rule));
    if (f.tool) add(s, el('span', { 'class': 'tag' }, 'tool ' + f.tool));
    if (f.conversation_id) add(s, el('span', { 'class': 'tag' }, 'conversation ' + f.conversation_id));
    add(s, el('span', { 'class': 'msg' }, f.message));
    var body = add(d, el('div', { 'class': 'finding-body' }));
    add(body, el('div', { 'class': 'mono muted' }, 'trace ' + f.trace_id + ' · span ' + f.span_id +
      (f.related.length ? ' · related ' + f.related.join(', ') : '')));
    var host = add(body, el('div', { 'class': 'wf-host' }));
    d.tripline_build = function () { if (!host.firstChild) buildWaterfall(host, f); };
    d.addEventListener('toggle', function () { if (d.open) d.tripline_build(); });
    return d;
  }

  // ---- waterfall ----------------------------------------------------------------------------
  function buildWaterfall(host, f) {
    var view = f.view === null || f.view === undefined ? null : DATA.views[f.view];
    if (!view) {
      add(host, el('p', { 'class': 'muted' }, 'No waterfall for this trace in the page (too large); run: tripline trace ' + f.trace_id));
      return;
    }
    var spans = view.spans;
    var n = spans.length;
    var hitRow = -1;
    var related = {};
    f.related.forEach(function (id) { related[id] = true; });
    for (var k = 0; k < n; k++) {
      if (spans[k].id === f.span_id && view.traces[spans[k].t] === f.trace_id) { hitRow = k; break; }
    }
    var edges = [];
    spans.forEach(function (s, i) { if (s.e !== undefined || s.b) edges.push(i); });

    var wf = add(host, el('div', { 'class': 'wf', 'data-waterfall': f.trace_id, 'data-spans': n }));
    add(wf, el('div', { 'class': 'muted' }, n + ' spans in ' + view.traces.length +
      (view.traces.length === 1 ? ' trace' : ' traces (stitched across a broken edge)') + ' · from ' + view.start +
      ' · ' + fmtNs(view.total_ns) + (view.cut ? ' · ' + view.cut + ' more spans not shown' : '')));
    var legend = add(wf, el('div', { 'class': 'legend' }));
    [['var(--client)', 'MCP client'], ['var(--server)', 'MCP server'], ['var(--other)', 'other'],
      ['var(--hit)', 'span of the finding']].forEach(function (l) {
      var sp = add(legend, el('span')); var i = add(sp, el('i')); i.style.background = l[0];
      sp.appendChild(document.createTextNode(l[1]));
    });
    var bl = add(legend, el('span', { 'class': 'wf-hint' }, '┆ red dashed: broken edge (context did not cross the MCP boundary) · click a row for its attributes'));
    bl.style.color = 'var(--broken)';
    var head = add(wf, el('div', { 'class': 'wf-head' }));
    add(head, el('div', { 'class': 'wf-labelcol' }, 'span · service'));
    var axis = add(head, el('div', { 'class': 'wf-axis' }));
    for (var t = 0; t <= 4; t++) {
      var tick = add(axis, el('span', null, fmtNs(view.total_ns * t / 4)));
      tick.style.left = (t * 25) + '%';
      if (t === 0) tick.style.transform = 'none';
      if (t === 4) tick.style.transform = 'translateX(-100%)';
    }
    var scroller = add(wf, el('div', { 'class': 'wf-scroll' }));
    scroller.style.height = Math.min(n * ROW_H + 2, 520) + 'px';
    var inner = add(scroller, el('div', { 'class': 'wf-inner' }));
    inner.style.height = (n * ROW_H) + 'px';
    var attrs = add(wf, el('div', { 'class': 'wf-attrs' }));
    var selected = -1;
    var pct = function (ns) { return Math.max(0, Math.min(100, ns / view.total_ns * 100)); };

    function rowElement(i) {
      var s = spans[i];
      var cls = 'wf-row' + (i === hitRow ? ' hit' : (related[s.id] ? ' related' : '')) + (i === selected ? ' sel' : '');
      var r = el('div', {
        'class': cls, 'data-row': i, 'data-span-id': s.id, 'data-trace-id': view.traces[s.t],
        'data-role': s.r, 'data-broken-edge': s.b ? (s.e === undefined ? 'no-host' : 'from-' + spans[s.e].id) : null,
        'data-finding-span': i === hitRow ? true : null
      });
      r.style.top = ((i - base) * ROW_H) + 'px';
      var label = add(r, el('div', { 'class': 'wf-label' }));
      label.style.paddingLeft = Math.min(s.dp, 40) * 12 + 'px';
      if (s.b) add(label, el('span', { 'class': 'badge', title: 'broken edge: trace context did not cross the MCP boundary' }, '⚠'));
      label.appendChild(document.createTextNode(s.n || '(unnamed)'));
      if (s.svc) add(label, el('span', { 'class': 'svc' }, s.svc));
      label.title = (s.n || '') + ' · ' + (s.svc || '?') + ' · ' + fmtNs(s.d);
      var track = add(r, el('div', { 'class': 'wf-track' }));
      var bar = add(track, el('div', { 'class': 'wf-bar' + (s.r ? ' ' + s.r : '') + (s.st === 'ERROR' ? ' err' : '') }));
      bar.style.left = pct(s.s) + '%';
      bar.style.width = Math.max(pct(s.d), 0.15) + '%';
      r.addEventListener('click', function () { select(i); });
      return r;
    }
    function edgeElement(i) {
      var s = spans[i];
      var from = s.e === undefined ? i : s.e;
      var top = Math.min(from, i), bottom = Math.max(from, i);
      var e = el('div', {
        'class': 'wf-edge' + (s.b ? ' broken' : ''), 'data-edge-from': spans[from].id, 'data-edge-to': s.id,
        'data-broken-edge': s.b ? true : null,
        title: s.b ? 'broken edge: the server span is not in the trace of the call' : 'client → server'
      });
      e.style.left = pct(s.s) + '%';
      var shownTop = Math.max(top, base);
      e.style.top = ((shownTop - base) * ROW_H + 4) + 'px';
      e.style.height = Math.max((bottom - shownTop) * ROW_H + 14, 14) + 'px';
      return e;
    }
    // On screen: the rows in view. Printed: PRINT_ROWS rows around the finding's span, from `base`.
    var base = 0, printing = false;
    function draw() {
      var first, last;
      if (printing) { first = base; last = Math.min(n, base + PRINT_ROWS); }
      else {
        var top = scroller.scrollTop, h = scroller.clientHeight || 520;
        first = Math.max(0, Math.floor(top / ROW_H) - BUFFER_ROWS);
        last = Math.min(n, Math.ceil((top + h) / ROW_H) + BUFFER_ROWS);
      }
      inner.textContent = '';
      var frag = document.createDocumentFragment();
      for (var i = first; i < last; i++) frag.appendChild(rowElement(i));
      var layer = el('div', { 'class': 'wf-edges' });
      edges.forEach(function (i) {
        var from = spans[i].e === undefined ? i : spans[i].e;
        if (Math.max(from, i) >= first && Math.min(from, i) < last) layer.appendChild(edgeElement(i));
      });
      frag.appendChild(layer);
      inner.appendChild(frag);
    }
    function select(i) {
      selected = i;
      var s = spans[i];
      attrs.textContent = '';
      var d = add(attrs, el('details', { open: true, 'class': 'span-attrs', 'data-span-id': s.id }));
      add(d, el('summary', null, 'Attributes of ' + (s.n || '(unnamed)') + ' (' + s.id + ')'));
      var tb = table(d, ['attribute', 'value']);
      s.a.forEach(function (kv) { row(tb, [kv[0], kv[1]]); });
      draw();
    }
    var pending = false;
    scroller.addEventListener('scroll', function () {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(function () { pending = false; draw(); });
    });
    if (hitRow >= 0) scroller.scrollTop = Math.max(0, hitRow * ROW_H - 120);
    draw();
    if (hitRow >= 0) select(hitRow);
    built.push({
      print: function () {
        printing = true;
        base = Math.max(0, Math.min(hitRow - PRINT_ROWS / 3, n - PRINT_ROWS));
        inner.style.height = (Math.min(n, base + PRINT_ROWS) - base) * ROW_H + 'px';
        draw();
      },
      screen: function () { printing = false; base = 0; inner.style.height = n * ROW_H + 'px'; draw(); }
    });
  }
  window.addEventListener('beforeprint', function () {
    // Printed, every finding shows its waterfall (built now: toggle events come too late).
    document.querySelectorAll('details.explain').forEach(function (d) { d.open = true; });
    document.querySelectorAll('details.finding').forEach(function (d, k) {
      if (k < PRINT_FINDINGS) { d.open = true; d.tripline_build(); }
    });
    built.forEach(function (b) { b.print(); });
  });
  window.addEventListener('afterprint', function () { built.forEach(function (b) { b.screen(); }); });

  // ---- coverage -----------------------------------------------------------------------------
  var csec = add(app, el('section', { id: 'coverage' }));
  add(csec, el('h2', null, 'Coverage'));
  add(csec, el('p', { 'class': 'muted' }, 'What each rule examined, and what it could not judge because the data was not captured. A rule that examined nothing found nothing by construction.'));
  var ctb = table(csec, ['rule', 'name', 'examined', 'not observable', 'reasons']);
  DATA.coverage.forEach(function (c) {
    var ul = el('ul', { 'class': 'reasons' });
    c.reasons.forEach(function (r) { add(ul, el('li', null, r)); });
    if (c.examined === 0) add(ul, el('li', null, 'nothing to examine: no finding from this rule is not evidence of health'));
    row(ctb, [c.rule, (rules[c.rule] || {}).name || '', c.examined, c.not_observable, ul],
      { 'data-rule': c.rule, 'class': c.examined === 0 || c.not_observable > 0 ? 'blind' : null });
  });

  // ---- tools --------------------------------------------------------------------------------
  var tsec = add(app, el('section', { id: 'tools' }));
  add(tsec, el('h2', null, 'Tools'));
  var ttb = table(tsec, ['tool', 'server', 'calls', 'tool errors', 'protocol errors', 'structured results',
    'text results', 'result not captured', 'approvals asked', 'approvals granted', 'p50 ms', 'p95 ms']);
  DATA.tools.rows.forEach(function (t) {
    row(ttb, [t.tool, t.server || '–', t.calls, t.tool_errors, t.protocol_errors, t.results_structured,
      t.results_observed - t.results_structured, t.calls - t.results_observed, t.approvals_asked,
      t.approvals_granted, fmtMs(t.p50_ms), fmtMs(t.p95_ms)], { 'data-tool': t.tool });
  });
  if (!DATA.tools.rows.length) add(tsec, el('p', { 'class': 'muted' }, 'No tool calls in the scan.'));
  notes(tsec, DATA.tools.notes);

  // ---- conversations ------------------------------------------------------------------------
  var vsec = add(app, el('section', { id: 'conversations' }));
  add(vsec, el('h2', null, 'Conversations (' + DATA.conversations_total +
    (DATA.conversations.length < DATA.conversations_total ? ', ' + DATA.conversations.length + ' listed' : '') + ')'));
  function runsTable(parent, runs) {
    var tb = table(parent, ['#', 'agent', 'started', 'duration ms', 'model calls', 'tool calls', 'tool errors', 'findings', 'trace', 'span']);
    runs.forEach(function (r, i) {
      row(tb, [i + 1, r.agent, r.started, r.duration_ms, r.model_calls, r.tool_calls, r.tool_errors,
        r.findings === null ? 'not counted' : r.findings,
        el('span', { 'class': 'mono' }, r.trace_id), el('span', { 'class': 'mono' }, r.span_id)],
        { 'data-run': r.span_id, 'data-trace-id': r.trace_id });
    });
  }
  DATA.conversations.forEach(function (c) {
    var d = add(vsec, el('details', { 'class': 'conversation', 'data-conversation': c.conversation_id, open: DATA.conversations.length <= 20 }));
    add(d, el('summary', null, c.conversation_id + ' · ' + c.started + ' · ' + c.duration_ms + ' ms · ' +
      c.agent_runs + ' agent runs · ' + c.model_calls + ' model calls · ' + c.tool_calls + ' tool calls · ' +
      c.tool_errors + ' tool errors' + (c.agents.length ? ' · agents ' + c.agents.join(', ') : '')));
    if (c.runs.length < c.agent_runs) add(d, el('p', { 'class': 'capped-rule' }, 'showing ' + c.runs.length + ' of ' + c.agent_runs + ' agent runs (--max-runs ' + DATA.limits.runs + ')'));
    if (c.runs.length) runsTable(d, c.runs); else if (!c.agent_runs) add(d, el('p', { 'class': 'muted' }, 'No invoke_agent span in this conversation.'));
  });
  if (DATA.loose_runs_total) {
    add(vsec, el('h3', null, 'Agent runs without a conversation id (' + DATA.loose_runs_total +
      (DATA.loose_runs.length < DATA.loose_runs_total ? ', ' + DATA.loose_runs.length + ' listed' : '') + ')'));
    runsTable(vsec, DATA.loose_runs);
  }
  if (!DATA.conversations_total && !DATA.loose_runs_total) add(vsec, el('p', { 'class': 'muted' }, 'No conversation or agent run in the scan.'));
  document.body.setAttribute('data-ready', 'true');
})();
