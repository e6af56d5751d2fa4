/* The trace view: a small canvas timeline of host threads and GPU streams for up to millions of slices.

   Data: typed columns (see pyprof_live/render/trace_data.py). Each lane (one nesting depth of one
   track) holds slices that never overlap, sorted by start, so the visible ones are found by binary
   search. Level of detail: slices narrower than a pixel are merged into one bar per run of pixels,
   so a frame costs at most one rectangle per pixel column per lane however many slices it covers.
   Every string is drawn with fillText or set with textContent: nothing from a profile is parsed as HTML. */
(function () {
  'use strict';
  var TYPES = { d: Float64Array, I: Uint32Array, i: Int32Array, B: Uint8Array };
  var LANE_H = 18, AXIS_H = 24, GUTTER = 210, TRACK_GAP = 6;
  var PALETTE = [];
  for (var h = 0; h < 24; h++) PALETTE.push('hsl(' + ((h * 157) % 360) + ',55%,' + (h % 2 ? 62 : 72) + '%)');

  function decode(header, buffer) {
    var cols = {};
    header.columns.forEach(function (c) {
      var T = TYPES[c.type];
      cols[c.name] = new T(buffer, c.offset, c.length);
    });
    return cols;
  }

  function TraceView(root, header, buffer, opts) {
    this.opts = opts;
    this.fmt = opts.formatTime;
    this.h = header;
    this.c = decode(header, buffer);
    this.strings = header.strings;
    var n = header.slices, c = this.c;
    this.end = new Float64Array(n);
    for (var i = 0; i < n; i++) this.end[i] = c.start[i] + c.dur[i];
    // lanes are contiguous runs of the slice columns
    this.laneFirst = new Int32Array(header.lanes + 1);
    var lane = -1;
    for (i = 0; i < n; i++) {
      while (lane < c.lane[i]) { lane++; this.laneFirst[lane] = i; }
    }
    while (lane < header.lanes) { lane++; this.laneFirst[lane] = n; }
    // record index -> slice index, for arrows and links
    this.sliceOf = [new Int32Array(c.op_params.length).fill(-1), null,
      new Int32Array(c.kernel_op.length).fill(-1), new Int32Array(c.memop_op.length).fill(-1)];
    for (i = 0; i < n; i++) { var m = this.sliceOf[c.kind[i]]; if (m) m[c.ref[i]] = i; }
    // kernels and memops of each op, for op -> kernel arrows
    this.launched = new Map();
    for (var k = 0; k < c.kernel_op.length; k++) this._link(c.kernel_op[k], 2, k);
    for (k = 0; k < c.memop_op.length; k++) this._link(c.memop_op[k], 3, k);
    this.backward = new Map();
    for (k = 0; k < c.op_fwd.length; k++) {
      if (c.op_fwd[k] >= 0) { var list = this.backward.get(c.op_fwd[k]) || []; list.push(k); this.backward.set(c.op_fwd[k], list); }
    }
    // vertical layout: y of each lane
    this.laneY = new Float64Array(header.lanes);
    var y = AXIS_H;
    header.tracks.forEach(function (t) {
      for (var d = 0; d < t.lanes; d++) this.laneY[t.lane + d] = y + d * LANE_H;
      y += t.lanes * LANE_H + TRACK_GAP;
    }, this);
    this.contentH = y;
    this.t0 = 0; this.t1 = Math.max(header.span, 1);
    this.scrollY = 0;
    this.selected = -1;
    this.showFlows = true;
    this._build(root);
    this.draw();
  }

  TraceView.prototype._link = function (op, kind, ref) {
    if (op < 0) return;
    var list = this.launched.get(op) || [];
    list.push([kind, ref]);
    this.launched.set(op, list);
  };

  TraceView.prototype._build = function (root) {
    var self = this;
    var wrap = document.createElement('div');
    wrap.className = 'trace-wrap';
    var canvas = document.createElement('canvas');
    canvas.tabIndex = 0;
    canvas.setAttribute('data-trace', '1');
    var tip = document.createElement('div');
    tip.className = 'tip';
    wrap.appendChild(canvas); wrap.appendChild(tip);
    root.appendChild(wrap);
    this.canvas = canvas; this.tip = tip; this.wrap = wrap;
    this.ctx = canvas.getContext('2d', { alpha: false });
    this.resize();
    this._onResize = function () { self.resize(); self.draw(); };
    window.addEventListener('resize', this._onResize);
    var drag = null;
    canvas.addEventListener('wheel', function (e) {
      e.preventDefault();
      var x = e.offsetX - GUTTER;
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        self.pan((e.shiftKey ? e.deltaY : e.deltaX) / self.plotW() * (self.t1 - self.t0));
      } else if (e.altKey) {
        self.scrollBy(e.deltaY);
      } else {
        self.zoom(Math.pow(1.0015, e.deltaY), x);
      }
    }, { passive: false });
    canvas.addEventListener('mousedown', function (e) {
      drag = { x: e.offsetX, y: e.offsetY, t0: self.t0, t1: self.t1, sy: self.scrollY, moved: false };
      canvas.classList.add('dragging');
    });
    window.addEventListener('mouseup', function (e) {
      if (!drag) return;
      canvas.classList.remove('dragging');
      if (!drag.moved && e.target === canvas) self.select(self.hit(e.offsetX, e.offsetY));
      drag = null;
    });
    canvas.addEventListener('mousemove', function (e) {
      if (drag) {
        var dx = e.offsetX - drag.x, dy = e.offsetY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        if (drag.moved) {
          var shift = -dx / self.plotW() * (drag.t1 - drag.t0);
          self.t0 = drag.t0 + shift; self.t1 = drag.t1 + shift;
          self.scrollY = self.clampScroll(drag.sy - dy);
          self.draw();
        }
        return;
      }
      self.hover(e.offsetX, e.offsetY);
    });
    canvas.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
    canvas.addEventListener('keydown', function (e) {
      var w = self.plotW() / 2, step = (self.t1 - self.t0) * 0.15;
      if (e.key === 'w') self.zoom(0.8, w);
      else if (e.key === 's') self.zoom(1.25, w);
      else if (e.key === 'a') self.pan(-step);
      else if (e.key === 'd') self.pan(step);
      else return;
      e.preventDefault();
    });
  };

  TraceView.prototype.destroy = function () { window.removeEventListener('resize', this._onResize); };
  TraceView.prototype.plotW = function () { return Math.max(this.cssW - GUTTER, 10); };
  TraceView.prototype.resize = function () {
    var width = Math.max(this.wrap.clientWidth, 400);
    var height = Math.min(Math.max(this.contentH, 120), Math.max(window.innerHeight - 260, 320));
    var ratio = window.devicePixelRatio || 1;
    this.cssW = width; this.cssH = height;
    this.canvas.width = Math.round(width * ratio); this.canvas.height = Math.round(height * ratio);
    this.canvas.style.width = width + 'px'; this.canvas.style.height = height + 'px';
    this.ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  };
  TraceView.prototype.clampScroll = function (y) { return Math.max(0, Math.min(y, Math.max(this.contentH - this.cssH, 0))); };
  TraceView.prototype.scrollBy = function (dy) { this.scrollY = this.clampScroll(this.scrollY + dy); this.draw(); };

  TraceView.prototype.zoom = function (factor, x) {
    var at = this.t0 + (x / this.plotW()) * (this.t1 - this.t0);
    var width = Math.max((this.t1 - this.t0) * factor, 50); // 50 ns: the narrowest window
    var left = (at - this.t0) / (this.t1 - this.t0);
    this.t0 = at - left * width; this.t1 = this.t0 + width;
    this.draw();
  };
  TraceView.prototype.pan = function (dt) { this.t0 += dt; this.t1 += dt; this.draw(); };
  TraceView.prototype.setRange = function (t0, t1) { this.t0 = t0; this.t1 = Math.max(t1, t0 + 50); this.draw(); };
  TraceView.prototype.reset = function () { this.setRange(0, Math.max(this.h.span, 1)); };

  TraceView.prototype.x = function (t) { return GUTTER + (t - this.t0) / (this.t1 - this.t0) * this.plotW(); };

  // First slice of a lane whose end is after t (ends are sorted within a lane).
  TraceView.prototype.firstAfter = function (lane, t) {
    var lo = this.laneFirst[lane], hi = this.laneFirst[lane + 1], end = this.end;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (end[mid] <= t) lo = mid + 1; else hi = mid; }
    return lo;
  };

  TraceView.prototype.draw = function () {
    var started = performance.now();
    var ctx = this.ctx, c = this.c, W = this.cssW, H = this.cssH;
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, H);
    var scale = this.plotW() / (this.t1 - this.t0), t0 = this.t0, t1 = this.t1;
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    var drawn = 0, merged = 0;
    ctx.save();
    ctx.beginPath(); ctx.rect(GUTTER, AXIS_H, W - GUTTER, H - AXIS_H); ctx.clip();
    for (var lane = 0; lane < this.h.lanes; lane++) {
      var y = this.laneY[lane] - this.scrollY;
      if (y + LANE_H < AXIS_H || y > H) continue;
      var i = this.firstAfter(lane, t0), last = this.laneFirst[lane + 1];
      var runStart = -1, runEnd = -1, runColor = null;
      for (; i < last; i++) {
        var s = c.start[i];
        if (s >= t1) break;
        var x0 = GUTTER + (s - t0) * scale, x1 = GUTTER + (this.end[i] - t0) * scale;
        if (x1 - x0 < 1.5) { // level of detail: merge sub-pixel slices into runs
          if (runStart >= 0 && x0 <= runEnd + 1) { if (x1 > runEnd) runEnd = x1; merged++; continue; }
          if (runStart >= 0) { ctx.fillStyle = runColor; ctx.fillRect(runStart, y + 1, Math.max(runEnd - runStart, 1), LANE_H - 2); drawn++; }
          runStart = x0; runEnd = Math.max(x1, x0 + 1); runColor = PALETTE[c.name[i] % 24];
          continue;
        }
        if (runStart >= 0) { ctx.fillStyle = runColor; ctx.fillRect(runStart, y + 1, Math.max(runEnd - runStart, 1), LANE_H - 2); drawn++; runStart = -1; }
        var left = Math.max(x0, GUTTER - 2), right = Math.min(x1, W + 2);
        ctx.fillStyle = PALETTE[c.name[i] % 24];
        ctx.fillRect(left, y + 1, right - left - 0.5, LANE_H - 2);
        drawn++;
        if (right - left > 36) {
          ctx.fillStyle = '#111';
          this._label(this.strings[c.name[i]], left + 3, y + LANE_H / 2, right - left - 6);
        }
      }
      if (runStart >= 0) { ctx.fillStyle = runColor; ctx.fillRect(runStart, y + 1, Math.max(runEnd - runStart, 1), LANE_H - 2); drawn++; }
    }
    this._drawSelection(scale);
    ctx.restore();
    this._drawGutter();
    this._drawAxis();
    this.stats = { drawn: drawn, merged: merged, ms: performance.now() - started };
    if (!this.paintedAt) this.paintedAt = performance.now();  // first paint, for the benchmark
    if (this.opts.onDraw) this.opts.onDraw(this);
  };

  TraceView.prototype._label = function (text, x, y, width) {
    var ctx = this.ctx;
    if (ctx.measureText(text).width > width) {
      var keep = Math.max(Math.floor(text.length * width / ctx.measureText(text).width) - 1, 0);
      if (keep < 2) return;
      text = text.slice(0, keep) + '\u2026';
    }
    ctx.fillText(text, x, y);
  };

  TraceView.prototype._drawGutter = function () {
    var ctx = this.ctx;
    ctx.fillStyle = '#f6f7f9'; ctx.fillRect(0, AXIS_H, GUTTER, this.cssH - AXIS_H);
    ctx.save();
    ctx.beginPath(); ctx.rect(0, AXIS_H, GUTTER, this.cssH - AXIS_H); ctx.clip();
    var lastProcess = null;
    this.h.tracks.forEach(function (t) {
      var y = this.laneY[t.lane] - this.scrollY;
      var bottom = y + t.lanes * LANE_H;
      if (bottom < AXIS_H || y > this.cssH) { lastProcess = t.process; return; }
      ctx.strokeStyle = '#e2e2e2';
      ctx.beginPath(); ctx.moveTo(0, bottom + TRACK_GAP / 2); ctx.lineTo(this.cssW, bottom + TRACK_GAP / 2); ctx.stroke();
      ctx.fillStyle = '#222';
      ctx.font = t.process !== lastProcess ? 'bold 11px system-ui, sans-serif' : '11px system-ui, sans-serif';
      this._label(t.process !== lastProcess ? t.process + ' \u00b7 ' + t.name : t.name, 6, y + LANE_H / 2, GUTTER - 10);
      lastProcess = t.process;
    }, this);
    ctx.restore();
  };

  TraceView.prototype._drawAxis = function () {
    var ctx = this.ctx, W = this.cssW;
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, AXIS_H);
    ctx.strokeStyle = '#ccc'; ctx.beginPath(); ctx.moveTo(0, AXIS_H - 0.5); ctx.lineTo(W, AXIS_H - 0.5); ctx.stroke();
    var span = this.t1 - this.t0;
    var step = Math.pow(10, Math.floor(Math.log10(span / 8)));
    if (span / step > 20) step *= 5; else if (span / step > 10) step *= 2;
    ctx.fillStyle = '#444'; ctx.font = '11px system-ui, sans-serif'; ctx.textBaseline = 'middle';
    for (var t = Math.ceil(this.t0 / step) * step; t < this.t1; t += step) {
      var x = this.x(t);
      ctx.fillRect(x, AXIS_H - 6, 1, 6);
      ctx.fillText(this.fmt(t), x + 3, AXIS_H / 2);
    }
    ctx.fillStyle = '#666';
    ctx.fillText('window ' + this.fmt(span), 6, AXIS_H / 2);
  };

  // centre of a slice on screen (x, y), clipped to the plot
  TraceView.prototype.anchor = function (i) {
    var x0 = Math.max(this.x(this.c.start[i]), GUTTER), x1 = Math.min(this.x(this.end[i]), this.cssW);
    return [(x0 + Math.max(x1, x0)) / 2, this.laneY[this.c.lane[i]] - this.scrollY + LANE_H / 2];
  };

  TraceView.prototype.flowsOf = function (i) {
    var c = this.c, kind = c.kind[i], ref = c.ref[i], flows = [], self = this;
    if (kind === 0) {
      (this.launched.get(ref) || []).forEach(function (kr) { flows.push([i, self.sliceOf[kr[0]][kr[1]]]); });
      if (c.op_fwd[ref] >= 0) flows.push([this.sliceOf[0][c.op_fwd[ref]], i]);
      (this.backward.get(ref) || []).forEach(function (b) { flows.push([i, self.sliceOf[0][b]]); });
    } else if (kind === 2 && c.kernel_op[ref] >= 0) {
      flows.push([this.sliceOf[0][c.kernel_op[ref]], i]);
    } else if (kind === 3 && c.memop_op[ref] >= 0) {
      flows.push([this.sliceOf[0][c.memop_op[ref]], i]);
    }
    return flows.filter(function (f) { return f[0] >= 0 && f[1] >= 0; });
  };

  TraceView.prototype._drawSelection = function () {
    if (this.selected < 0) return;
    var ctx = this.ctx, i = this.selected;
    var x0 = this.x(this.c.start[i]), x1 = this.x(this.end[i]);
    var y = this.laneY[this.c.lane[i]] - this.scrollY;
    ctx.strokeStyle = '#000'; ctx.lineWidth = 2;
    ctx.strokeRect(x0, y + 1, Math.max(x1 - x0, 2), LANE_H - 2);
    ctx.lineWidth = 1.2;
    if (!this.showFlows) return;
    this.flowsOf(i).forEach(function (f) {
      var a = this.anchor(f[0]), b = this.anchor(f[1]);
      ctx.strokeStyle = this.c.kind[f[1]] === 0 ? '#d62728' : '#1f5fbf';
      ctx.fillStyle = ctx.strokeStyle;
      ctx.beginPath(); ctx.moveTo(a[0], a[1]);
      var mid = (a[1] + b[1]) / 2;
      ctx.bezierCurveTo(a[0], mid, b[0], mid, b[0], b[1]); ctx.stroke();
      ctx.beginPath(); ctx.moveTo(b[0], b[1]); ctx.lineTo(b[0] - 4, b[1] - (b[1] > a[1] ? 7 : -7)); ctx.lineTo(b[0] + 4, b[1] - (b[1] > a[1] ? 7 : -7)); ctx.fill();
    }, this);
  };

  // the slice under a point, or -1; among merged sub-pixel slices, the longest one in that pixel
  TraceView.prototype.hit = function (px, py) {
    if (px < GUTTER || py < AXIS_H) return -1;
    var y = py + this.scrollY, lane = -1;
    for (var l = 0; l < this.h.lanes; l++) if (y >= this.laneY[l] && y < this.laneY[l] + LANE_H) { lane = l; break; }
    if (lane < 0) return -1;
    var perPx = (this.t1 - this.t0) / this.plotW();
    var t = this.t0 + (px - GUTTER) * perPx;
    var i = this.firstAfter(lane, t - 2 * perPx), last = this.laneFirst[lane + 1], best = -1;
    for (; i < last && this.c.start[i] <= t + 2 * perPx; i++) {
      if (best < 0 || this.c.dur[i] > this.c.dur[best]) best = i;
    }
    return best;
  };

  TraceView.prototype.hover = function (px, py) {
    var i = this.hit(px, py), tip = this.tip;
    if (i < 0) { tip.style.display = 'none'; return; }
    tip.textContent = this.strings[this.c.name[i]] + ' \u00b7 ' + this.fmt(this.c.dur[i]);
    tip.style.left = Math.min(px + 12, this.cssW - 300) + 'px';
    tip.style.top = (py + 14) + 'px';
    tip.style.display = 'block';
  };

  TraceView.prototype.select = function (i) {
    this.selected = i;
    this.draw();
    if (this.opts.onSelect) this.opts.onSelect(i >= 0 ? this.describe(i) : null);
  };

  // brings slice i into view (zoomed around it) and selects it
  TraceView.prototype.reveal = function (i) {
    var d = Math.max(this.c.dur[i], 1000);
    this.t0 = this.c.start[i] - d * 2; this.t1 = this.end[i] + d * 2;
    var y = this.laneY[this.c.lane[i]];
    if (y - this.scrollY < AXIS_H || y - this.scrollY > this.cssH - LANE_H) this.scrollY = this.clampScroll(y - this.cssH / 2);
    this.select(i);
  };

  TraceView.prototype.trackOf = function (i) {
    var lane = this.c.lane[i], found = null;
    this.h.tracks.forEach(function (t) { if (lane >= t.lane && lane < t.lane + t.lanes) found = t; });
    return found;
  };

  // what the details panel shows: [label, text] pairs and links to related slices
  TraceView.prototype.describe = function (i) {
    var c = this.c, S = this.strings, ref = c.ref[i], kind = this.h.kinds[c.kind[i]], self = this;
    var track = this.trackOf(i);
    var rows = [['name', S[c.name[i]]], ['kind', kind], ['duration', this.fmt(c.dur[i])],
      ['start', this.fmt(c.start[i])], ['track', track.process + ' \u00b7 ' + track.name]];
    var links = [];
    function num(v, quantity) { return isNaN(v) ? 'na' : self.opts.human(v, quantity); }
    function link(label, slice) { if (slice >= 0) links.push([label, slice, S[c.name[slice]]]); }
    if (kind === 'op') {
      rows.push(['direction', this.h.dirs[c.op_dir[ref]] || '-'], ['input shapes', S[c.op_params[ref]] || '-'],
        ['module', S[c.op_module[ref]] || '-'], ['call site', S[c.op_callsite[ref]] || '-'],
        ['layer', S[c.op_layer[ref]] || '-'], ['flops', num(c.op_flops[ref], 'flops')], ['bytes', num(c.op_bytes[ref], 'bytes')],
        ['sequence number', c.op_seq[ref] >= 0 ? String(c.op_seq[ref]) : '-']);
      if (c.op_parent[ref] >= 0) link('called by', this.sliceOf[0][c.op_parent[ref]]);
      if (c.op_fwd[ref] >= 0) link('forward op', this.sliceOf[0][c.op_fwd[ref]]);
      (this.backward.get(ref) || []).forEach(function (b) { link('backward op', self.sliceOf[0][b]); });
      (this.launched.get(ref) || []).forEach(function (kr) { link(kr[0] === 2 ? 'launched kernel' : 'launched memop', self.sliceOf[kr[0]][kr[1]]); });
    } else if (kind === 'kernel') {
      rows.push(['kernel', S[c.kernel_full[ref]]], ['grid', S[c.kernel_grid[ref]]], ['block', S[c.kernel_block[ref]]],
        ['registers per thread', String(c.kernel_registers[ref])], ['shared memory', this.opts.human(c.kernel_shared[ref], 'bytes')]);
      var op = c.kernel_op[ref];
      rows.push(['op', op >= 0 ? S[c.name[this.sliceOf[0][op]]] : '(unattributed)']);
      if (op >= 0) {
        rows.push(['op input shapes', S[c.op_params[op]] || '-'], ['op module', S[c.op_module[op]] || '-'],
          ['op call site', S[c.op_callsite[op]] || '-'], ['op flops', num(c.op_flops[op], 'flops')]);
        link('launched by', this.sliceOf[0][op]);
      }
    } else if (kind === 'memop') {
      rows.push(['bytes', this.opts.human(c.memop_bytes[ref], 'bytes')]);
      var mop = c.memop_op[ref];
      rows.push(['op', mop >= 0 ? S[c.name[this.sliceOf[0][mop]]] : '(unattributed)']);
      if (mop >= 0) link('launched by', this.sliceOf[0][mop]);
    } else {
      rows.push(['range kind', S[c.range_kind[ref]]]);
    }
    return { slice: i, kind: kind, rows: rows, links: links };
  };

  // for tests and scripts: the first visible slice of a kind, with its position on the page
  TraceView.prototype.findVisible = function (kind) {
    var want = this.h.kinds.indexOf(kind);
    for (var lane = 0; lane < this.h.lanes; lane++) {
      var y = this.laneY[lane] - this.scrollY;
      if (y < AXIS_H || y + LANE_H > this.cssH) continue;
      for (var i = this.firstAfter(lane, this.t0); i < this.laneFirst[lane + 1] && this.c.start[i] < this.t1; i++) {
        if (this.c.kind[i] !== want) continue;
        var x0 = Math.max(this.x(this.c.start[i]), GUTTER), x1 = Math.min(this.x(this.end[i]), this.cssW);
        if (x1 - x0 < 3) continue;
        var box = this.canvas.getBoundingClientRect();
        return { slice: i, name: this.strings[this.c.name[i]], x: box.left + (x0 + x1) / 2, y: box.top + y + LANE_H / 2 };
      }
    }
    return null;
  };

  window.PyprofTrace = TraceView;
})();
