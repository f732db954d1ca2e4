// ptas-sandbox inspector: live refresh. Every few seconds, while "live" is ticked and the tab is visible, the
// page is fetched again and the regions marked data-live (the content and the clock) are replaced when they
// changed; forms outside them keep what you typed. No framework, no inline script (the CSP forbids it).
(function () {
  "use strict";
  var box = document.getElementById("live");
  if (!box) { return; }
  var interval = Number(document.body.getAttribute("data-interval")) || 2000;
  box.checked = window.localStorage.getItem("ptas-inspector-live") !== "off";
  box.addEventListener("change", function () {
    window.localStorage.setItem("ptas-inspector-live", box.checked ? "on" : "off");
  });
  function swap(html) {
    var fresh = new DOMParser().parseFromString(html, "text/html");
    var regions = document.querySelectorAll("[data-live]");
    for (var i = 0; i < regions.length; i++) {
      var next = fresh.getElementById(regions[i].id);
      if (next && next.innerHTML !== regions[i].innerHTML) {
        var open = Array.prototype.map.call(regions[i].querySelectorAll("details"), function (d) { return d.open; });
        regions[i].innerHTML = next.innerHTML;
        var details = regions[i].querySelectorAll("details");
        for (var j = 0; j < details.length && j < open.length; j++) { details[j].open = open[j]; }
      }
    }
    document.body.setAttribute("data-refreshes", String(Number(document.body.getAttribute("data-refreshes") || 0) + 1));
  }
  function tick() {
    if (box.checked && !document.hidden) {
      fetch(window.location.href, { credentials: "same-origin", headers: { "X-Inspector-Refresh": "1" } })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) { if (html) { swap(html); } })
        .catch(function () {})
        .then(function () { window.setTimeout(tick, interval); });
    } else {
      window.setTimeout(tick, interval);
    }
  }
  window.setTimeout(tick, interval);
}());
