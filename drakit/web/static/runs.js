// The runs comparison as a box chart (min–max whisker, q1–q3 box, median tick) drawn by the vendored
// Chart.js from the page's JSON data island; no inline script, so the page's CSP stays strict.
"use strict";
(function () {
  const island = document.getElementById("runs-data");
  const canvas = document.getElementById("runs-chart");
  if (!island || !canvas || typeof Chart === "undefined") return;
  const data = JSON.parse(island.textContent);
  const labels = data.groups.map((g) => `${g.key} (n=${g.n})`);
  const chart = new Chart(canvas, {
    type: "bar",
    data: {
      labels,
      datasets: [
        { label: "min–max", data: data.groups.map((g) => [g.min, g.max]), backgroundColor: "#5b6673",
          maxBarThickness: 3, grouped: false, order: 3 },
        { label: "q1–q3", data: data.groups.map((g) => [g.q1, g.q3]), backgroundColor: "rgba(31,95,168,0.55)",
          borderColor: "#1f5fa8", borderWidth: 1, maxBarThickness: 64, grouped: false, order: 2 },
        { label: "median", type: "line", data: data.groups.map((g) => g.median), showLine: false,
          pointStyle: "line", pointRadius: 32, pointBorderWidth: 3, borderColor: "#b3261e", order: 1 },
      ],
    },
    options: {
      animation: false, responsive: true, maintainAspectRatio: false,
      scales: { y: { beginAtZero: false, grace: "10%", title: { display: true, text: data.metric } } },
      plugins: { tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${JSON.stringify(c.raw)}` } } },
    },
  });
  canvas.dataset.drawn = String(chart.data.labels.length);
})();
