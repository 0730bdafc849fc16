// A simulation's pods pending and running over simulated time, drawn by the vendored Chart.js from
// the page's JSON data island (no inline script: the page's CSP stays strict).
"use strict";
(function () {
  const island = document.getElementById("sim-data");
  const canvas = document.getElementById("sim-chart");
  if (!island || !canvas || typeof Chart === "undefined") return;
  const series = JSON.parse(island.textContent).series;
  const line = (label, pick, color) => ({ label, data: series.map((s) => ({ x: s.time, y: pick(s) })),
    borderColor: color, backgroundColor: color, stepped: true, pointRadius: 0, borderWidth: 2 });
  const chart = new Chart(canvas, {
    type: "line",
    data: { datasets: [line("running", (s) => s.running, "#1f5fa8"), line("pending", (s) => s.pending, "#b3261e")] },
    options: {
      animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
      scales: { x: { type: "linear", title: { display: true, text: "simulated seconds" } },
                y: { beginAtZero: true, title: { display: true, text: "pods" } } },
    },
  });
  canvas.dataset.drawn = String(chart.data.datasets[0].data.length);
})();
