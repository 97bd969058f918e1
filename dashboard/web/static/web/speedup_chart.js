// Draws the speedup bar chart from the JSON that the page embeds (json_script, so it is escaped).
(function () {
  "use strict";
  var holder = document.getElementById("speedup-chart");
  var source = document.getElementById("speedup-chart-data");
  if (!holder || !source || typeof Plotly === "undefined") return;
  var chart = JSON.parse(source.textContent);
  var traces = chart.traces.map(function (t) {
    return {
      type: "bar", name: t.name, x: t.x, y: t.y,
      error_y: { type: "data", symmetric: false, array: t.noise, arrayminus: t.noise_below, visible: true },
      customdata: t.status,
      hovertemplate: "%{x}<br>speedup %{y:.3f}x<br>status %{customdata}<extra>%{fullData.name}</extra>"
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
