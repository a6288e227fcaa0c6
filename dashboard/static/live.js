// Refresh the page's <main> every few seconds from the server (the indexer follows the chain),
// keeping the scroll position; pauses while the tab is hidden. No dependencies.
(function () {
  "use strict";
  var PERIOD_MS = 3000;
  async function refresh() {
    if (document.hidden) return;
    try {
      var resp = await fetch(window.location.href, { headers: { "X-Live": "1" } });
      if (!resp.ok) return;
      var doc = new DOMParser().parseFromString(await resp.text(), "text/html");
      var fresh = doc.querySelector("main");
      var main = document.querySelector("main");
      if (fresh && main && fresh.innerHTML !== main.innerHTML) main.innerHTML = fresh.innerHTML;
      var stamp = doc.querySelector("#index-status");
      var mine = document.querySelector("#index-status");
      if (stamp && mine) mine.textContent = stamp.textContent;
    } catch (e) {
      /* the server may be restarting: try again next period */
    }
  }
  setInterval(refresh, PERIOD_MS);
})();
