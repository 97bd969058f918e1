// Draws the page's charts from the JSON it embeds (json_script, so it is escaped). The server
// sends compact data (dashboard/web/charts.py); this file turns it into Plotly traces.
(function () {
  "use strict";
  var source = document.getElementById("chart-data");
  if (!source || typeof Plotly === "undefined") return;
  var spec = JSON.parse(source.textContent);
  if (!spec) return;
  var plotConfig = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["lasso2d", "select2d"] };
  var BAND = "rgba(31, 119, 180, 0.18)";
  // One colour per configuration on every subplot of the overview, as its one legend says.
  var PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  // Past ten configurations a colour comes back: with another marker and dash, so that no two lines
  // of one chart look alike (10 colours x 6 markers x 3 dashes).
  var SYMBOLS = ["circle", "square", "diamond", "triangle-up", "x", "star"];
  var DASHES = ["solid", "dot", "dash"];
  function look(i) {
    var round = Math.floor(i / PALETTE.length);
    return { color: PALETTE[i % PALETTE.length], symbol: SYMBOLS[round % SYMBOLS.length], dash: DASHES[Math.floor(round / SYMBOLS.length) % DASHES.length] };
  }

  function base(extra) {
    return Object.assign({
      margin: { t: 56, r: 12, b: 40, l: 56 },
      hovermode: "closest",
      // Above the plot, right of the title: the build names under the x axis are long and slanted.
      legend: { orientation: "h", x: 1, xanchor: "right", y: 1.02, yanchor: "bottom" },
      font: { size: 11 }
    }, extra);
  }
  function draw(el, traces, layout) {
    return Plotly.newPlot(el, traces, layout, plotConfig).then(function () {
      el.setAttribute("data-drawn", "true");
      return el;
    });
  }
  // Builds are categories in build order (the server sends them oldest first): one point per
  // build, never a vertical line when builds share a date.
  function buildAxis(order) {
    return { type: "category", categoryorder: "array", categoryarray: order, automargin: true, tickangle: -30 };
  }
  function goCompare(ref) {
    if (!ref || !spec.compare_url) return;
    window.location.href = spec.compare_url + "?machine=" + encodeURIComponent(spec.machine_class) + "&head=" + encodeURIComponent(ref);
  }

  // Overview: one figure, a subplot per figure, a line per configuration; one legend toggles a
  // configuration on every subplot.
  function drawTrends() {
    var el = document.getElementById("overview-trends");
    if (!el) return;
    var traces = [];
    var top = 90;
    var layout = base({ margin: { t: top, r: 12, b: 40, l: 56 }, legend: { orientation: "h", x: 0, xanchor: "left", y: 0.995, yanchor: "top", yref: "container" }, grid: { rows: Math.ceil(spec.charts.length / 2), columns: 2, pattern: "independent", ygap: 0.55 }, annotations: [], height: 340 * Math.ceil(spec.charts.length / 2) + top + 30 });
    spec.charts.forEach(function (chart, c) {
      var axis = c === 0 ? "" : String(c + 1);
      spec.series.forEach(function (s, i) {
        var l = look(i), lone = s.i.length === 1;  // one build: a marker large enough to find
        // Each point names its build by index: its tick, ref and hover are sent once per page.
        traces.push({
          type: "scatter", mode: "lines+markers", name: s.name, legendgroup: s.name, showlegend: c === 0,
          x: s.i.map(function (b) { return spec.builds[b]; }), y: chart.y[i], customdata: s.i.map(function (b) { return spec.refs[b]; }),
          text: s.i.map(function (b, k) { return spec.hovers[b] + " · over " + s.cases[k] + " cases"; }), xaxis: "x" + axis, yaxis: "y" + axis,
          marker: { size: lone ? 9 : 6, color: l.color, symbol: l.symbol }, line: { width: 1.4, color: l.color, dash: l.dash },
          hovertemplate: "%{y" + (chart.percent ? ":.1%" : ":.4g") + "}<br>%{text}<extra>%{fullData.name}</extra>"
        });
      });
      layout["xaxis" + axis] = buildAxis(spec.builds);
      layout["yaxis" + axis] = Object.assign({ title: { text: chart.unit, font: { size: 10 } } }, chart.percent ? { tickformat: ".0%" } : {});
      layout.annotations.push({ text: "<b>" + chart.title + "</b>", xref: "x" + axis + " domain", yref: "y" + axis + " domain", x: 0, y: 1.12, showarrow: false, xanchor: "left" });
    });
    draw(el, traces, layout).then(function () {
      el.on("plotly_click", function (event) { goCompare(event.points[0].customdata); });
      // Many configurations wrap the legend into rows: the charts (and their titles) move below it.
      var legend = el.querySelector(".legend");
      var rows = legend ? legend.getBoundingClientRect().height : 0;
      if (rows + 50 > top) {
        var grown = Math.ceil(rows + 50);
        el.removeAttribute("data-drawn");
        Plotly.relayout(el, { "margin.t": grown, height: layout.height + grown - top }).then(function () { el.setAttribute("data-drawn", "true"); });
      }
    });
  }

  // Workload page: one chart per metric group, with noise bands and regression markers.
  function drawSeries() {
    spec.charts.forEach(function (chart) {
      var el = document.getElementById(chart.id);
      if (!el) return;
      var traces = [];
      chart.lines.forEach(function (line, n) {
        if (line.low) {
          traces.push({ type: "scatter", mode: "lines", x: spec.x, y: line.low, line: { width: 0 }, hoverinfo: "skip", showlegend: false, legendgroup: line.name });
          traces.push({ type: "scatter", mode: "lines", x: spec.x, y: line.high, line: { width: 0 }, fill: "tonexty", fillcolor: BAND, hoverinfo: "skip", name: line.name + " noise band", legendgroup: line.name, showlegend: false });
        }
        traces.push({
          type: "scatter", mode: "lines+markers", name: line.name, legendgroup: line.name, x: spec.x, y: line.y,
          customdata: spec.refs, text: spec.hover, marker: { size: 4, color: PALETTE[n % PALETTE.length] }, line: { width: 1.5, color: PALETTE[n % PALETTE.length] },
          hovertemplate: "%{y:.4g}<br>%{text}<extra>%{fullData.name}</extra>"
        });
      });
      // Each run of a build measured more than once: a hollow dot per run on that build's column.
      chart.lines.forEach(function (line, n) {
        if (!line.runs) return;
        traces.push({ type: "scatter", mode: "markers", name: line.name + ", each run", legendgroup: line.name,
          x: line.runs.i.map(function (i) { return spec.x[i]; }), y: line.runs.y,
          customdata: line.runs.i.map(function (i) { return spec.refs[i]; }), text: line.runs.i.map(function (i) { return spec.hover[i]; }),
          marker: { symbol: "circle-open", size: 6, opacity: 0.6, color: PALETTE[n % PALETTE.length] },
          hovertemplate: "%{y:.4g} (one run)<br>%{text}<extra>%{fullData.name}</extra>" });
      });
      if (chart.id === "series-speedup") {
        var failed = spec.status.map(function (s, i) { return s === "pass" ? null : i; }).filter(function (i) { return i !== null; });
        if (failed.length) {
          traces.push({ type: "scatter", mode: "markers", name: "failed", x: failed.map(function (i) { return spec.x[i]; }), y: failed.map(function () { return 0; }),
            text: failed.map(function (i) { return spec.status[i]; }), customdata: failed.map(function (i) { return spec.refs[i]; }),
            marker: { symbol: "x", color: "#b3261e", size: 8 }, hovertemplate: "%{text}<br>build %{customdata}<extra></extra>" });
        }
      }
      if (chart.markers.length) {
        traces.push({ type: "scatter", mode: "markers", name: "detected change",
          x: chart.markers.map(function (m) { return spec.x[m.i]; }), y: chart.markers.map(function (m) { return chart.lines[m.line || 0].y[m.i]; }),
          text: chart.markers.map(function (m) { return m.text; }), customdata: chart.markers.map(function (m) { return spec.refs[m.i]; }),
          marker: { symbol: "triangle-down", size: 12, color: chart.markers.map(function (m) { return m.kind === "improvement" ? "#1b7f3b" : "#b3261e"; }) },
          hovertemplate: "%{text}<br>first bad build %{customdata}<extra></extra>" });
      }
      if (chart.host && chart.host.length) {
        var onLine = chart.lines[0].y;
        traces.push({ type: "scatter", mode: "markers", name: "host slowed",
          x: chart.host.map(function (h) { return spec.x[h.i]; }), y: chart.host.map(function (h) { return onLine[h.i]; }),
          text: chart.host.map(function (h) { return h.text; }), customdata: chart.host.map(function (h) { return spec.refs[h.i]; }),
          marker: { symbol: "circle-open", size: 13, color: "#8a5a00", line: { width: 2 } },
          hovertemplate: "%{text}<br>build %{customdata}<extra></extra>" });
      }
      var extras = chart.markers.length + (chart.host ? chart.host.length : 0);
      // A crowded legend (the phase charts: a line per phase and the total) wraps into rows above the
      // plot, over the title: the title gets the top line and the legend's rows the space below it.
      var entries = traces.filter(function (t) { return t.showlegend !== false; }).length;
      var title = { text: chart.title, font: { size: 13 }, x: 0.01, xanchor: "left" };
      var crowded = {};
      if (entries > 4) {
        var rows = Math.ceil(entries / Math.max(1, Math.floor((el.clientWidth - 40) / 170)));
        title = Object.assign(title, { yref: "container", y: 1, yanchor: "top", pad: { t: 8 } });
        crowded = { margin: { t: 34 + 22 * rows, r: 12, b: 40, l: 56 }, legend: { orientation: "h", x: 0, xanchor: "left", y: 1.02, yanchor: "bottom" } };
      }
      // A finding's page: its last good and first bad builds, as lines across the chart.
      var marks = changeMarks();
      draw(el, traces, base(Object.assign({ title: title, shapes: marks.shapes, annotations: marks.annotations, xaxis: buildAxis(spec.x), yaxis: Object.assign({ title: { text: chart.unit } }, chart.from_zero ? { rangemode: "tozero", tickformat: ",.3~g" } : {}), showlegend: chart.lines.length > 1 || extras > 0 }, crowded))).then(function () {
        el.on("plotly_click", function (event) { goCompare(event.points[0].customdata); });
      });
    });
  }

  function changeMarks() {
    var out = { shapes: [], annotations: [] };
    if (!spec.change) return out;
    [["good", "last good", "#5f6b7a", "dot", "right"], ["bad", "first bad", "#b3261e", "dash", "left"]].forEach(function (m) {
      var i = spec.change[m[0]];
      if (i === null || i === undefined) return;
      out.shapes.push({ type: "line", xref: "x", yref: "paper", x0: spec.x[i], x1: spec.x[i], y0: 0, y1: 1, line: { color: m[2], width: 1.5, dash: m[3] } });
      out.annotations.push({ xref: "x", yref: "paper", x: spec.x[i], y: 1, yanchor: "top", xanchor: m[4], text: " " + m[1] + " ", showarrow: false, font: { size: 10, color: m[2] } });
    });
    return out;
  }

  // Backed vs unbacked: the suite geomean of the gap over builds, and a heatmap per workload.
  function drawDynamic() {
    var line = document.getElementById("dynamic-geomean");
    if (line) {
      draw(line, [
        { type: "scatter", mode: "lines+markers", name: "geomean gap (unbacked / backed speedup)", x: spec.x, y: spec.gap, customdata: spec.refs, text: spec.hover, hovertemplate: "%{y:.3f}<br>%{text}<extra></extra>" },
        { type: "scatter", mode: "lines+markers", name: "geomean compile-time ratio (unbacked / backed)", x: spec.x, y: spec.compile, customdata: spec.refs, text: spec.hover, hovertemplate: "%{y:.3f}<br>%{text}<extra></extra>" }
      ], base({ title: { text: "suite geomean over builds", font: { size: 13 }, x: 0.01, xanchor: "left" }, xaxis: buildAxis(spec.x), yaxis: { title: { text: spec.unit } },
        shapes: [{ type: "rect", xref: "paper", x0: 0, x1: 1, y0: 0.95, y1: 1.05, fillcolor: "rgba(0,0,0,0.06)", line: { width: 0 } }] }));
    }
    var heat = document.getElementById("dynamic-heatmap");
    if (heat && spec.workloads.length) {
      // Log2 of the ratio, centred on 1 and symmetric (0.5 and 2 equally strong), at least 0.5..2
      // and at most 1/8..8: red = unbacked slower, blue = unbacked faster, white = no gap.
      var reach = 1, quiet = spec.quiet || [];  // quiet: within noise / too noisy, drawn white, not on the scale
      spec.z.forEach(function (row, w) { row.forEach(function (v, b) {
        if (v > 0 && !(quiet[w] && quiet[w][b])) reach = Math.max(reach, Math.abs(Math.log2(v))); }); });
      reach = Math.min(3, Math.ceil(reach));
      var ticks = [];
      for (var k = -reach; k <= reach; k++) ticks.push(k);
      var logZ = spec.z.map(function (row, w) { return row.map(function (v, b) {
        if (quiet[w] && quiet[w][b]) return v > 0 ? 0 : null;  // within noise / too noisy to track: no colour
        return v > 0 ? Math.max(-reach, Math.min(reach, Math.log2(v))) : null; }); });
      var hover = spec.z.map(function (row, w) { return row.map(function (v, b) {
        var word = quiet[w] && quiet[w][b] ? " (" + quiet[w][b] + ")" : "";
        var against = spec.every_dim && spec.every_dim[w][b] ? "<br>against backed on every dim" : "";
        return spec.hover[b] + "<br>" + (v > 0 ? "gap " + v.toFixed(3) + word : (spec.failed[w][b] || "not measured")) + against; }); });
      var traces = [{
        type: "heatmap", name: "gap", x: spec.x, y: spec.workloads, z: logZ, zmin: -reach, zmax: reach, zmid: 0,
        colorscale: [[0, "#b2182b"], [0.25, "#ef8a62"], [0.5, "#f7f7f7"], [0.75, "#67a9cf"], [1, "#2166ac"]],
        text: hover, xgap: 1, ygap: 1,
        colorbar: { title: { text: "gap<br>unbacked / backed" }, tickvals: ticks,
          ticktext: ticks.map(function (k) { return k < 0 ? "1/" + Math.pow(2, -k) : String(Math.pow(2, k)); }) },
        hovertemplate: "%{y}<br>%{text}<extra></extra>", hoverongaps: false
      }];
      // A case that failed (on either side) is a dark cell naming its status, never a blank.
      var failedZ = spec.failed.map(function (row) { return row.map(function (f) { return f ? 1 : null; }); });
      if (failedZ.some(function (row) { return row.some(function (v) { return v !== null; }); })) {
        traces.push({ type: "heatmap", name: "failed", x: spec.x, y: spec.workloads, z: failedZ, showscale: false,
          colorscale: [[0, "#4a4a4a"], [1, "#4a4a4a"]], xgap: 1, ygap: 1, hoverongaps: false,
          text: spec.failed.map(function (row) { return row.map(function (f) { return f ? f.replace(/^(un)?backed /, "") : ""; }); }),
          customdata: hover, texttemplate: "%{text}", textfont: { color: "#ffffff", size: 10 },
          hovertemplate: "%{y}<br>%{customdata}<extra></extra>" });
      }
      draw(heat, traces, base({ title: { text: "unbacked gap per workload (log scale: white = no gap, within noise or too noisy to track; red = unbacked slower; dark = failed); click a cell to show that build", font: { size: 13 } },
        xaxis: buildAxis(spec.x), yaxis: { automargin: true }, height: Math.max(360, 30 * spec.workloads.length + 200), margin: { t: 34, r: 12, b: 40, l: 160 } })).then(function () {
        heat.on("plotly_click", function (event) {
          var column = event.points[0].pointIndex[1];
          var params = new URLSearchParams(window.location.search);
          params.set("build", spec.refs[column]);
          window.location.search = params.toString();
        });
      });
    }
  }

  if (spec.kind === "trends") drawTrends();
  else if (spec.kind === "series") drawSeries();
  else if (spec.kind === "dynamic") drawDynamic();
})();
