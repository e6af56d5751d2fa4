/* pyprof_live dashboard: one page, two sources of data.

   Served (`pyprof-live serve LOGDIR`): runs, views and traces come from /api/..., and server-sent
   events say when a run changed on disk, so the open page updates by itself.
   One file (`p.save_html()`): the same data is embedded in the page (#pyprof-data), traces gzip'd.
   Every string from a profile reaches the page through textContent, never as markup. */
(function () {
  'use strict';

  // ---------------------------------------------------------------- helpers

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (k === 'text') node.textContent = attrs[k];
      else if (k === 'class') node.className = attrs[k];
      else if (k.slice(0, 2) === 'on') node.addEventListener(k.slice(2), attrs[k]);
      else node.setAttribute(k, attrs[k]);
    });
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    }
    return node;
  }
  var SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }
  function note(text, cls) { return el('p', { class: cls || 'note', text: text }); }

  // Human units: the same ladders as the text report (UNITS comes from pyprof_live, see page_units.py).
  var UNITS = null;
  function significant(x, digits) {
    if (x === 0) return '0';
    var integerDigits = Math.abs(x) >= 1 ? String(Math.trunc(Math.abs(x))).length : 1;
    var text = x.toFixed(Math.max(digits - integerDigits, 0));
    return text.indexOf('.') >= 0 ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
  }
  function human(value, quantity) {
    var rule = UNITS[quantity], ladder = rule.ladder, lastScale = ladder[ladder.length - 1][0];
    for (var i = 0; i < ladder.length; i++) {
      var scale = ladder[i][0], suffix = ladder[i][1];
      if (Math.abs(value) >= scale || scale === lastScale) {
        if (scale === lastScale && Number.isInteger(value)) return value.toLocaleString('en-US') + ' ' + suffix;
        return significant(value / scale, rule.digits) + ' ' + suffix;
      }
    }
  }
  function formatTime(ns) { return human(ns, 'time'); }
  window.pyprofHuman = function (value, quantity) { return human(value, quantity); };

  var COLORS = { kernel: '#4e79a7', memcpy: '#f28e2b', memset: '#e15759', runtime: '#76b7b2', dataloader: '#59a14f',
    cpu_exec: '#edc948', other: '#bab0ac', fwd: '#4e79a7', bwd: '#f28e2b', rest: '#bab0ac', a: '#4e79a7', b: '#f28e2b' };
  var STEP_PARTS = ['kernel', 'memcpy', 'memset', 'runtime', 'dataloader', 'cpu_exec', 'other'];

  // ---------------------------------------------------------------- data sources

  function gunzip(base64) {
    var bytes = Uint8Array.from(atob(base64), function (ch) { return ch.charCodeAt(0); });
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).arrayBuffer();
  }
  function splitTrace(buffer) {  // [u32 header length][header JSON][padding to 8][columns]
    var length = new DataView(buffer).getUint32(0, true);
    var header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, length)));
    var start = 4 + length + ((8 - ((4 + length) % 8)) % 8);
    return { header: header, buffer: buffer.slice(start) };
  }
  function embeddedSource(data) {
    function key(run, worker) { return run + '\u0000' + worker; }
    var workers = {};
    data.workers.forEach(function (w) { workers[key(w.run, w.worker)] = w; });
    return {
      live: false,
      runs: function () { return Promise.resolve({ runs: data.runs, units: data.units }); },
      views: function (run, worker) { return Promise.resolve(workers[key(run, worker)].views); },
      trace: function (run, worker) { return gunzip(workers[key(run, worker)].trace).then(splitTrace); },
      distributed: function (run) { return Promise.resolve(data.distributed[run]); },
      diff: function () { return Promise.reject(new Error('the one-file export holds a single run: use pyprof-live diff A B')); },
      subscribe: function () {}
    };
  }
  function fetchJson(url) {
    return fetch(url).then(function (r) {
      if (!r.ok) return r.text().then(function (t) { throw new Error(t || r.statusText); });
      return r.json();
    });
  }
  function query(params) {
    return Object.keys(params).map(function (k) { return encodeURIComponent(k) + '=' + encodeURIComponent(params[k]); }).join('&');
  }
  function serverSource() {
    return {
      live: true,
      runs: function () { return fetchJson('api/runs'); },
      views: function (run, worker) { return fetchJson('api/views?' + query({ run: run, worker: worker })); },
      trace: function (run, worker) {
        return fetch('api/trace?' + query({ run: run, worker: worker })).then(function (r) {
          if (!r.ok) return r.text().then(function (t) { throw new Error(t); });
          return r.arrayBuffer();
        }).then(splitTrace);
      },
      distributed: function (run) { return fetchJson('api/distributed?' + query({ run: run })); },
      diff: function (a, b, by) {
        return fetchJson('api/diff?' + query({ a_run: a[0], a_worker: a[1], b_run: b[0], b_worker: b[1], by: by }));
      },
      subscribe: function (onChange) {
        if (!window.EventSource) return;
        var events = new EventSource('api/events');
        events.addEventListener('runs', function (e) { onChange(JSON.parse(e.data)); });
      }
    };
  }
  var embedded = document.getElementById('pyprof-data');
  var source = embedded ? embeddedSource(JSON.parse(embedded.textContent)) : serverSource();

  // ---------------------------------------------------------------- state and routing

  var VIEWS = [['overview', 'Overview'], ['operator', 'Operator'], ['kernel', 'Kernel'], ['module', 'Module'],
    ['trace', 'Trace'], ['memory', 'Memory'], ['distributed', 'Distributed'], ['diff', 'Diff']];
  var state = { runs: [], run: null, worker: null, view: 'overview', cache: {}, traces: {}, versions: {}, trace: null,
    operatorBy: 'ops', topN: 15, diff: null };
  var main = document.getElementById('main');
  var runSelect = document.getElementById('run'), workerSelect = document.getElementById('worker');

  function readHash() {
    var params = {};
    location.hash.slice(1).split('&').forEach(function (part) {
      var kv = part.split('=');
      if (kv[0]) params[decodeURIComponent(kv[0])] = decodeURIComponent(kv.slice(1).join('='));
    });
    return params;
  }
  function writeHash() {
    var hash = '#' + query({ view: state.view, run: state.run || '', worker: state.worker || '' });
    if (location.hash !== hash) history.replaceState(null, '', hash);
  }
  function runInfo(name) { return state.runs.filter(function (r) { return r.name === name; })[0]; }
  function workerKey() { return state.run + '\u0000' + state.worker; }

  function fillSelect(select, names, chosen) {
    while (select.firstChild) select.removeChild(select.firstChild);
    names.forEach(function (n) { select.appendChild(el('option', { value: n, text: n })); });
    select.value = chosen;
  }

  function setRuns(runs) {
    state.runs = runs;
    if (!runInfo(state.run)) state.run = runs.length ? runs[0].name : null;
    var run = runInfo(state.run);
    var workers = run ? run.workers.map(function (w) { return w.name; }) : [];
    if (workers.indexOf(state.worker) < 0) state.worker = workers.length ? workers[0] : null;
    fillSelect(runSelect, runs.map(function (r) { return r.name; }), state.run);
    fillSelect(workerSelect, workers, state.worker);
    renderTabs();
  }

  function renderTabs() {
    var tabs = document.getElementById('tabs');
    while (tabs.firstChild) tabs.removeChild(tabs.firstChild);
    var run = runInfo(state.run);
    VIEWS.forEach(function (v) {
      if (v[0] === 'distributed' && !(run && run.workers.length > 1)) return;
      if (v[0] === 'diff' && state.runs.reduce(function (n, r) { return n + r.workers.length; }, 0) < 2) return;
      var a = el('a', { href: '#', text: v[1], 'data-view': v[0], class: state.view === v[0] ? 'active' : '',
        onclick: function (e) { e.preventDefault(); show(v[0]); } });
      tabs.appendChild(a);
    });
  }

  function show(view) {
    if (state.trace) { state.trace.destroy(); state.trace = null; }
    state.view = view;
    writeHash();
    renderTabs();
    render();
  }

  function loadViews() {
    var key = workerKey();
    if (!state.cache[key]) state.cache[key] = source.views(state.run, state.worker);
    return state.cache[key];
  }

  function render() {
    document.documentElement.removeAttribute('data-ready');
    while (main.firstChild) main.removeChild(main.firstChild);
    if (!state.run) { main.appendChild(note('No runs in this log directory yet: start a job with profile(logdir=...) and it will appear here.')); return done(); }
    var view = state.view, target = el('div', { 'data-page': view });
    main.appendChild(target);
    var work;
    if (view === 'distributed') work = source.distributed(state.run).then(function (d) { renderDistributed(target, d); });
    else if (view === 'diff') work = renderDiff(target);
    else if (view === 'trace') work = renderTrace(target);
    else work = loadViews().then(function (p) { PAGES[view](target, p); });
    work.then(done, function (err) { target.appendChild(note(String(err.message || err), 'error')); done(); });
  }
  function done() { document.documentElement.setAttribute('data-ready', String(Date.now())); }

  // ---------------------------------------------------------------- tables and charts

  function table(payload, name, limit) {
    limit = limit || 300;
    var wrap = el('div', { class: 'table-wrap' });
    var filter = el('input', { type: 'search', placeholder: 'filter rows', 'aria-label': 'filter ' + name });
    var download = el('button', { text: 'CSV', title: 'download the rows with raw numbers (ns, bytes, flops)' });
    var order = payload.rows.map(function (_, i) { return i; });
    var sortCol = -1, descending = true;
    var t = el('table', { class: 'grid', 'data-table': name });
    var headRow = el('tr');
    payload.columns.forEach(function (col, ci) {
      var th = el('th', { text: col.header, title: col.name, 'data-column': col.name });
      th.addEventListener('click', function () {
        descending = sortCol === ci ? !descending : true; sortCol = ci;
        order.sort(function (a, b) {
          var x = payload.rows[a][ci], y = payload.rows[b][ci];
          var xn = typeof x === 'number', yn = typeof y === 'number', o;
          if (xn && yn) o = x - y; else if (xn || yn) return xn ? -1 : 1;
          else o = String(x === null ? '' : x).localeCompare(String(y === null ? '' : y));
          return descending ? -o : o;
        });
        Array.prototype.forEach.call(headRow.cells, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
        fill();
      });
      headRow.appendChild(th);
    });
    t.appendChild(el('thead', null, headRow));
    var body = el('tbody');
    t.appendChild(body);
    var more = note('');
    function fill() {
      while (body.firstChild) body.removeChild(body.firstChild);
      var needle = filter.value.toLowerCase(), shown = 0, matching = 0;
      order.forEach(function (i) {
        var text = payload.text[i];
        if (needle && text.join(' ').toLowerCase().indexOf(needle) < 0) return;
        matching++;
        if (shown >= limit) return;
        shown++;
        var tr = el('tr');
        payload.columns.forEach(function (col, ci) {
          var numeric = col.quantity !== 'text';
          tr.appendChild(el('td', { class: numeric ? 'num' : 'text', text: text[ci] }));
        });
        body.appendChild(tr);
      });
      more.textContent = matching > shown ? 'showing ' + shown + ' of ' + matching + ' rows (filter or sort to see others; CSV has all)' : '';
    }
    download.addEventListener('click', function () { downloadCsv(payload, name); });
    fill();
    wrap.appendChild(el('div', { class: 'controls' }, filter, download));
    wrap.appendChild(t);
    wrap.appendChild(more);
    payload.notes.forEach(function (n) { wrap.appendChild(note(n)); });
    return wrap;
  }

  function downloadCsv(payload, name) {
    function quote(v) { return '"' + String(v === null ? '-' : v).replace(/"/g, '""') + '"'; }
    var lines = [payload.columns.map(function (c) { return quote(c.header); }).join(',')];
    payload.rows.forEach(function (r) { lines.push(r.map(quote).join(',')); });
    var a = el('a', { href: URL.createObjectURL(new Blob([lines.join('\n') + '\n'], { type: 'text/csv' })),
      download: (state.run + '-' + state.worker + '-' + name + '.csv').replace(/[^\w.+-]+/g, '_') });
    document.body.appendChild(a); a.click(); a.remove();
  }

  function columnIndex(payload, name) {
    for (var i = 0; i < payload.columns.length; i++) if (payload.columns[i].name === name) return i;
    return -1;
  }

  // horizontal bars: items = [{label, parts: [[part, value]], text}]
  function barChart(title, items, name, quantity) {
    var labelW = 250, barW = 380, rowH = 20, width = labelW + barW + 90, height = 6 + rowH * items.length;
    var box = el('div', { class: 'chart', 'data-chart': name }, el('h3', { text: title }));
    if (!items.length) { box.appendChild(note('nothing to show')); return box; }
    var s = svg('svg', { width: width, height: height, viewBox: '0 0 ' + width + ' ' + height, role: 'img' });
    var scale = Math.max.apply(null, items.map(function (it) { return it.parts.reduce(function (a, p) { return a + Math.max(p[1], 0); }, 0); })) || 1;
    items.forEach(function (it, i) {
      var y = 3 + i * rowH;
      var label = svg('text', { x: labelW - 6, y: y + 14, 'text-anchor': 'end', class: 'label' });
      label.textContent = it.label.length > 38 ? it.label.slice(0, 37) + '\u2026' : it.label;
      var full = svg('title'); full.textContent = it.label; label.appendChild(full);
      s.appendChild(label);
      var x = labelW, total = 0;
      it.parts.forEach(function (p) {
        var w = barW * Math.max(p[1], 0) / scale;
        total += p[1];
        if (w <= 0) return;
        var r = svg('rect', { x: x, y: y + 3, width: w, height: rowH - 6, fill: COLORS[p[0]] || '#4e79a7', 'data-part': p[0], 'data-value': p[1] });
        var tip = svg('title'); tip.textContent = it.label + ': ' + p[0] + ' ' + human(p[1], quantity); r.appendChild(tip);
        s.appendChild(r);
        x += w;
      });
      var value = svg('text', { x: x + 5, y: y + 14 });
      value.textContent = human(total, quantity);
      s.appendChild(value);
    });
    box.appendChild(s);
    return box;
  }

  function topBars(payload, column, title, n, part) {
    var li = columnIndex(payload, payload.columns[0].name), vi = columnIndex(payload, column);
    if (vi < 0) return null;
    var sh = columnIndex(payload, 'params');
    var order = payload.rows.map(function (_, i) { return i; }).filter(function (i) { return typeof payload.rows[i][vi] === 'number' && payload.rows[i][vi] > 0; });
    order.sort(function (a, b) { return payload.rows[b][vi] - payload.rows[a][vi]; });
    var items = order.slice(0, n).map(function (i) {
      var label = String(payload.rows[i][li]) + (sh >= 0 && payload.rows[i][sh] ? ' ' + payload.rows[i][sh] : '');
      return { label: label, parts: [[part, payload.rows[i][vi]]] };
    });
    return barChart(title, items, column, payload.columns[vi].quantity === 'text' ? 'time' : payload.columns[vi].quantity);
  }

  function legend(parts) {
    var box = el('div', { class: 'legend' });
    parts.forEach(function (p) { box.appendChild(el('span', null, el('i', { style: 'background:' + (COLORS[p[0]] || '#999') }), p[1])); });
    return box;
  }

  // ---------------------------------------------------------------- pages

  var PAGES = {};

  PAGES.overview = function (root, p) {
    var s = p.summary;
    root.appendChild(el('h2', { text: 'Overview' }));
    root.appendChild(note('source: ' + s.source + (s.path ? ' \u00b7 ' + s.path : '')));
    var cards = el('div', { class: 'cards' });
    var ov = p.views.overview, total = ov.rows.length ? ov.rows.length - 1 : -1;
    var items = s.cards.slice();
    var steps = ov.rows.filter(function (r) { return r[0] !== 'total'; });
    if (ov.rows.length) {
      items.push(['steps', String(steps.length)]);
      items.push(['wall time', ov.text[total][columnIndex(ov, 'dur')]]);
      var busy = columnIndex(ov, 'busy%');
      if (busy >= 0) items.push(['GPU busy', ov.text[total][busy]]);
    }
    items.forEach(function (c) { cards.appendChild(el('div', { class: 'card', 'data-card': c[0] }, el('div', { class: 'k', text: c[0] }), el('div', { class: 'v', text: c[1] }))); });
    root.appendChild(cards);
    s.devices.forEach(function (d) { root.appendChild(note('device ' + d)); });
    root.appendChild(el('h2', { text: 'Step time breakdown' }));
    var parts = STEP_PARTS.filter(function (c) { return columnIndex(ov, c) >= 0; });
    root.appendChild(legend(parts.map(function (c) { return [c, c]; })));
    root.appendChild(barChart('wall time per step, split by what ran (kernel > memcpy > memset > runtime > dataloader > CPU exec > other)',
      steps.map(function (r) { return { label: String(r[0]), parts: parts.map(function (c) { return [c, r[columnIndex(ov, c)] || 0]; }) }; }), 'steps', 'time'));
    root.appendChild(table(ov, 'steps'));
    root.appendChild(el('h2', { text: 'Recommendations' }));
    root.appendChild(table(p.views.recommendations, 'recommendations'));
  };

  PAGES.operator = function (root, p) {
    root.appendChild(el('h2', { text: 'Operators' }));
    var by = el('select', { 'aria-label': 'group by' }, el('option', { value: 'ops', text: 'Operator' }), el('option', { value: 'ops+shape', text: 'Operator + input shape' }));
    by.value = state.operatorBy;
    var top = el('select', { 'aria-label': 'top' });
    [10, 15, 25, 50].forEach(function (n) { top.appendChild(el('option', { value: n, text: 'top ' + n })); });
    top.value = String(state.topN);
    var body = el('div');
    function draw() {
      while (body.firstChild) body.removeChild(body.firstChild);
      var view = p.views[state.operatorBy], charts = el('div', { class: 'charts' });
      [['dev_self', 'Device self time', 'kernel'], ['dev', 'Device total time', 'kernel'],
        ['host_self', 'Host self time', 'cpu_exec'], ['host', 'Host total time', 'cpu_exec']].forEach(function (c) {
        var chart = topBars(view, c[0], c[1], state.topN, c[2]);
        if (chart) charts.appendChild(chart);
      });
      body.appendChild(charts);
      body.appendChild(table(view, state.operatorBy));
    }
    by.addEventListener('change', function () { state.operatorBy = by.value; draw(); });
    top.addEventListener('change', function () { state.topN = Number(top.value); draw(); });
    root.appendChild(el('div', { class: 'controls' }, el('label', null, 'Group by ', by), top));
    root.appendChild(body);
    draw();
  };

  PAGES.kernel = function (root, p) {
    root.appendChild(el('h2', { text: 'GPU kernels' }));
    var view = p.views.kernels;
    if (!view.rows.length) { root.appendChild(note('No GPU kernels in this profile (a CPU-only run, or a source without device activity).')); return; }
    var charts = el('div', { class: 'charts' });
    charts.appendChild(topBars(view, 'sil', 'Total device time', 15, 'kernel'));
    charts.appendChild(topBars(view, 'mean', 'Mean device time', 15, 'kernel'));
    root.appendChild(charts);
    root.appendChild(table(view, 'kernels'));
  };

  PAGES.module = function (root, p) {
    root.appendChild(el('h2', { text: 'Module tree' }));
    var view = p.views.modules;
    if (!view.rows.length) { root.appendChild(note('No nn.Module paths in this profile (live capture records them; imports need with_modules).')); return; }
    var device = columnIndex(view, 'dev') >= 0;
    var keys = device ? ['dev', 'dev_fwd', 'dev_bwd'] : ['host', 'fwd', 'bwd'];
    var ix = keys.map(function (k) { return columnIndex(view, k); });
    var mi = columnIndex(view, 'module'), oi = columnIndex(view, 'ops');
    var scale = Math.max.apply(null, view.rows.map(function (r) { return r[ix[0]] || 0; })) || 1;
    var expand = el('button', { text: 'expand all' }), collapse = el('button', { text: 'collapse all' });
    root.appendChild(el('div', { class: 'controls' }, expand, collapse, legend([['fwd', 'forward'], ['bwd', 'backward'], ['rest', 'other']]),
      note('bar = ' + view.columns[ix[0]].header)));
    var tree = el('div', { class: 'tree', 'data-chart': 'modules' });
    var stack = [[tree, -1]];
    view.rows.forEach(function (r, i) {
      var path = String(r[mi]), depth = path.split('.').length - 1;
      while (stack.length > 1 && stack[stack.length - 1][1] >= depth) stack.pop();
      var next = view.rows[i + 1], parent = stack[stack.length - 1][0];
      var hasKids = next && String(next[mi]).indexOf(path + '.') === 0;
      var total = r[ix[0]] || 0, f = r[ix[1]] || 0, b = r[ix[2]] || 0;
      var bar = el('span', { class: 'mbar' });
      [['fwd', f], ['bwd', b], ['rest', Math.max(total - f - b, 0)]].forEach(function (part) {
        if (part[1] > 0) bar.appendChild(el('span', { style: 'width:' + (100 * part[1] / scale).toFixed(2) + '%;background:' + COLORS[part[0]] }));
      });
      var line = [el('span', { class: 'name', style: 'padding-left:' + (16 * depth) + 'px', title: path, text: path.split('.').pop() }), bar,
        el('span', { class: 'num', text: view.text[i][ix[0]] + ' \u00b7 ' + view.text[i][oi] + ' ops' })];
      var node;
      if (hasKids) {
        node = el('details', { class: 'tree-node', 'data-module': path });
        if (depth < 2) node.open = true;
        node.appendChild(el.apply(null, ['summary', null].concat(line)));
        stack.push([node, depth]);
      } else {
        node = el.apply(null, ['div', { class: 'tree-node leaf', 'data-module': path }].concat(line));
      }
      parent.appendChild(node);
    });
    expand.addEventListener('click', function () { tree.querySelectorAll('details').forEach(function (d) { d.open = true; }); });
    collapse.addEventListener('click', function () { tree.querySelectorAll('details').forEach(function (d) { d.open = false; }); });
    root.appendChild(tree);
    root.appendChild(table(view, 'modules'));
  };

  PAGES.memory = function (root, p) {
    root.appendChild(el('h2', { text: 'Memory' }));
    if (!p.memory.length && !p.views.memory.rows.length) {
      root.appendChild(note('This profile recorded no allocations (Kineto traces need profile_memory=True).'));
      return;
    }
    if (p.memory.length) root.appendChild(legend([['a', 'allocated'], ['b', 'reserved (caching allocator)'], ['memset', 'peak']]));
    p.memory.forEach(function (curve) { root.appendChild(memoryChart(curve)); });
    root.appendChild(el('h2', { text: p.memory.length ? 'Live at the peak, by op' : 'Allocated, by op' }));
    root.appendChild(table(p.views.memory, 'memory'));
    root.appendChild(el('h2', { text: p.memory.length ? 'Live at the peak, by module' : 'Allocated, by module' }));
    root.appendChild(table(p.views['memory+module'], 'memory+module'));
  };

  function memoryChart(curve) {
    var W = 1000, H = 240, left = 70, bottom = 22, top = 10;
    var box = el('div', { class: 'chart', 'data-chart': 'memory-' + curve.device },
      el('h3', { text: curve.device + ': peak ' + human(curve.peak, 'bytes') + ' at ' + human(curve.peak_time, 'time') +
        ' (' + curve.events.toLocaleString('en-US') + ' allocations and frees)' }));
    var s = svg('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img' });
    var t0 = curve.times[0], t1 = curve.times[curve.times.length - 1] || t0 + 1;
    var top_ = Math.max(curve.peak, Math.max.apply(null, curve.reserved || [0])) || 1;
    function x(t) { return left + (W - left - 10) * (t - t0) / Math.max(t1 - t0, 1); }
    function y(v) { return top + (H - top - bottom) * (1 - v / top_); }
    for (var k = 0; k <= 4; k++) {
      var v = top_ * k / 4, gy = y(v);
      s.appendChild(svg('line', { x1: left, x2: W - 10, y1: gy, y2: gy, stroke: '#eee' }));
      var label = svg('text', { x: left - 6, y: gy + 4, 'text-anchor': 'end' }); label.textContent = human(v, 'bytes'); s.appendChild(label);
    }
    [t0, (t0 + t1) / 2, t1].forEach(function (t, k) {
      var label = svg('text', { x: x(t), y: H - 6, 'text-anchor': ['start', 'middle', 'end'][k] }); label.textContent = human(t, 'time'); s.appendChild(label);
    });
    function line(values, color, dash) {
      var points = curve.times.map(function (t, i) { return x(t).toFixed(1) + ',' + y(values[i]).toFixed(1); });
      var path = svg('polyline', { points: points.join(' '), fill: 'none', stroke: color, 'stroke-width': 1.5 });
      if (dash) path.setAttribute('stroke-dasharray', '4 3');
      s.appendChild(path);
    }
    if (curve.reserved) line(curve.reserved, COLORS.b, true);
    line(curve.allocated, COLORS.a, false);
    var peak = svg('circle', { cx: x(curve.peak_time), cy: y(curve.peak), r: 4, fill: COLORS.memset, 'data-peak': curve.peak });
    var tip = svg('title'); tip.textContent = 'peak ' + human(curve.peak, 'bytes'); peak.appendChild(tip);
    s.appendChild(peak);
    box.appendChild(s);
    return box;
  }

  function renderTrace(root) {
    root.appendChild(el('h2', { text: 'Trace' }));
    var key = workerKey();
    var version = state.versions[key];
    var started = performance.now();
    if (!state.traces[key] || state.traces[key].version !== version) state.traces[key] = { version: version, data: source.trace(state.run, state.worker) };
    var bar = el('div', { class: 'controls' });
    var host = el('div');
    var details = el('div', { class: 'details', 'data-details': '1' }, note('Click a slice for its details: shapes, module, call site, flops, kernel grid. ' +
      'Wheel: zoom at the pointer; drag: pan; shift+wheel: pan; alt+wheel: scroll tracks; keys w/s zoom, a/d pan.'));
    root.appendChild(bar); root.appendChild(host); root.appendChild(details);
    return state.traces[key].data.then(function (t) {
      if (!t.header.slices) { host.appendChild(note('Nothing to draw: this profile has no ops, ranges or kernels.')); return; }
      var view = new window.PyprofTrace(host, t.header, t.buffer, {
        formatTime: formatTime, human: human,
        onSelect: function (d) { showDetails(details, d, view); }
      });
      state.trace = view;
      window.pyprofTrace = view;
      window.pyprofFirstPaint = performance.now() - started;
      var flows = el('input', { type: 'checkbox', checked: 'checked', 'aria-label': 'arrows' });
      flows.addEventListener('change', function () { view.showFlows = flows.checked; view.draw(); });
      bar.appendChild(el('button', { text: 'zoom in', onclick: function () { view.zoom(0.5, view.plotW() / 2); } }));
      bar.appendChild(el('button', { text: 'zoom out', onclick: function () { view.zoom(2, view.plotW() / 2); } }));
      bar.appendChild(el('button', { text: 'reset', onclick: function () { view.reset(); } }));
      bar.appendChild(el('label', null, flows, ' arrows (op \u2192 kernel, fwd \u2192 bwd)'));
      bar.appendChild(note(t.header.slices.toLocaleString('en-US') + ' slices on ' + t.header.tracks.length + ' tracks'));
    });
  }

  function showDetails(box, d, view) {
    while (box.firstChild) box.removeChild(box.firstChild);
    if (!d) { box.appendChild(note('nothing selected')); return; }
    var dl = el('dl');
    d.rows.forEach(function (r) { dl.appendChild(el('dt', { text: r[0] })); dl.appendChild(el('dd', { text: r[1], 'data-field': r[0] })); });
    box.appendChild(dl);
    if (d.links.length) {
      var links = el('dl');
      d.links.slice(0, 50).forEach(function (l) {
        links.appendChild(el('dt', { text: l[0] }));
        links.appendChild(el('dd', null, el('a', { text: l[2], onclick: function () { view.reveal(l[1]); } })));
      });
      if (d.links.length > 50) links.appendChild(el('dd', { text: '\u2026 ' + (d.links.length - 50) + ' more' }));
      box.appendChild(links);
    }
  }

  function renderDistributed(root, d) {
    root.appendChild(el('h2', { text: 'Distributed: workers of run ' + state.run }));
    var view = d.view, wi = columnIndex(view, 'worker');
    var parts = STEP_PARTS.filter(function (c) { return columnIndex(view, c) >= 0; });
    root.appendChild(legend(parts.map(function (c) { return [c, c]; })));
    root.appendChild(barChart('wall time of the steps per worker, split by what ran', view.rows.map(function (r) {
      return { label: String(r[wi]), parts: parts.map(function (c) { return [c, r[columnIndex(view, c)] || 0]; }) };
    }), 'workers', 'time'));
    root.appendChild(table(view, 'workers'));
    (d.notes || []).forEach(function (n) { root.appendChild(note(n)); });
  }

  function renderDiff(root) {
    root.appendChild(el('h2', { text: 'Diff: two runs, op by op (B \u2212 A)' }));
    var pairs = [];
    state.runs.forEach(function (r) { r.workers.forEach(function (w) { pairs.push([r.name, w.name]); }); });
    if (pairs.length < 2) { root.appendChild(note('Diff needs two profiles: this log directory holds one.')); return Promise.resolve(); }
    function picker(label, index) {
      var s = el('select', { 'aria-label': label });
      pairs.forEach(function (p, i) { s.appendChild(el('option', { value: i, text: p[0] + ' / ' + p[1] })); });
      s.value = String(index);
      return s;
    }
    var prior = state.diff || { a: 0, b: 1, by: 'op' };
    var a = picker('A', Math.min(prior.a, pairs.length - 1)), b = picker('B', Math.min(prior.b, pairs.length - 1));
    var by = el('select', { 'aria-label': 'diff by' }, el('option', { value: 'op', text: 'op' }), el('option', { value: 'op+shape', text: 'op + shape' }));
    by.value = prior.by;
    var body = el('div');
    var go = el('button', { text: 'compare' });
    root.appendChild(el('div', { class: 'controls' }, el('label', null, 'A ', a), el('label', null, 'B ', b), el('label', null, 'by ', by), go));
    root.appendChild(body);
    function run() {
      state.diff = { a: Number(a.value), b: Number(b.value), by: by.value };
      while (body.firstChild) body.removeChild(body.firstChild);
      body.appendChild(note('comparing\u2026'));
      return source.diff(pairs[a.value], pairs[b.value], by.value).then(function (view) {
        while (body.firstChild) body.removeChild(body.firstChild);
        // the view sorts by device time when both profiles have some, else by host time: so does the chart
        function some(name) { var i = columnIndex(view, name); return i >= 0 && view.rows.some(function (r) { return r[i] > 0; }); }
        var time = some('dev_self_a') && some('dev_self_b') ? 'd_dev_self' : 'd_host_self', ti = columnIndex(view, time);
        var items = view.rows.slice(0, 15).map(function (r) { return { label: String(r[0]), parts: [[r[ti] >= 0 ? 'b' : 'a', Math.abs(r[ti] || 0)]] }; });
        body.appendChild(legend([['b', 'slower in B'], ['a', 'faster in B']]));
        body.appendChild(barChart('largest changes of self time', items, 'diff', 'time'));
        body.appendChild(table(view, 'diff'));
      }, function (err) { body.appendChild(note(String(err.message || err), 'error')); });
    }
    go.addEventListener('click', function () { document.documentElement.removeAttribute('data-ready'); run().then(done); });
    return run();
  }

  // ---------------------------------------------------------------- live updates

  function onRuns(data) {
    var before = state.versions;
    state.versions = {};
    data.runs.forEach(function (r) { r.workers.forEach(function (w) { state.versions[r.name + '\u0000' + w.name] = w.version; }); });
    var key = workerKey(), changed = before[key] !== undefined && before[key] !== state.versions[key];
    var listChanged = JSON.stringify(state.runs.map(function (r) { return [r.name, r.workers.map(function (w) { return w.name; })]; })) !==
      JSON.stringify(data.runs.map(function (r) { return [r.name, r.workers.map(function (w) { return w.name; })]; }));
    var hadRun = !!state.run;
    setRuns(data.runs);
    if (changed) delete state.cache[key];
    document.getElementById('live').textContent = source.live ? 'live \u00b7 updated ' + new Date().toLocaleTimeString() : '';
    if (changed || (listChanged && !hadRun)) {
      if (state.view === 'trace' && state.trace && changed) {  // keep the window the user is looking at
        var keep = [state.trace.t0, state.trace.t1];
        state.trace.destroy(); state.trace = null;
        render();
        var key2 = workerKey();
        state.traces[key2].data.then(function () { if (state.trace) state.trace.setRange(keep[0], keep[1]); });
      } else if (state.view !== 'diff') {
        render();
      }
    }
  }

  runSelect.addEventListener('change', function () { state.run = runSelect.value; state.worker = null; setRuns(state.runs); show(state.view); });
  workerSelect.addEventListener('change', function () { state.worker = workerSelect.value; show(state.view); });

  function followHash() {
    var wanted = readHash();
    state.run = wanted.run || state.run; state.worker = wanted.worker || state.worker;
    if (wanted.view && VIEWS.some(function (v) { return v[0] === wanted.view; })) state.view = wanted.view;
  }
  window.addEventListener('hashchange', function () {
    followHash();
    setRuns(state.runs);
    show(state.view);
  });

  source.runs().then(function (data) {
    UNITS = data.units;
    followHash();
    onRuns(data);
    show(state.view);
    source.subscribe(onRuns);
  }, function (err) { main.textContent = ''; main.appendChild(note('cannot reach the pyprof_live server: ' + err.message, 'error')); done(); });
})();
