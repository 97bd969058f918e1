// Draws the speedup bar chart from the JSON that the page embeds (json_script, so it is escaped).
(function () {
  "use strict";
  var holder = document.getElementById("speedup-chart");
  var source = document.getElementById("speedup-chart-data");
  if (!holder || !source || typeof Plotly === "undefined") return;
  var chart = JSON.parse(source.textContent);
  // null: no error bar at all (a case too noisy to track); Plotly draws a cap at 0 for null, none for NaN.
  function bars(values) { return values.map(function (v) { return v === null ? NaN : v; }); }
  var traces = chart.traces.map(function (t) {
    return {
      type: "bar", name: t.name, x: t.x, y: t.y,
      error_y: { type: "data", symmetric: false, array: bars(t.noise), arrayminus: bars(t.noise_below), visible: true },
      customdata: t.status,
      // A case too noisy to track has no error bar; its bar says so (contract.findings).
      text: t.note, textposition: "outside", cliponaxis: false, textfont: { size: 10, color: "#6b7280" },
      hovertemplate: "%{x}<br>speedup %{y:.3f}x<br>status %{customdata} %{text}<extra>%{fullData.name}</extra>"
    };
  });
  Plotly.newPlot(holder, traces, {
    barmode: "group",
    margin: { t: 20, r: 10, b: 80, l: 60 },
    yaxis: { title: { text: "speedup over eager (x)" }, rangemode: "tozero" },
    shapes: [{ type: "line", xref: "paper", x0: 0, x1: 1, y0: 1, y1: 1, line: { dash: "dot", width: 1 } }],
    legend: { orientation: "h" }
  }, { responsive: true, displaylogo: false }).then(function () {
    holder.setAttribute("data-drawn", "true");
  });
})();
