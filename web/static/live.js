// Live updates for the room page: new messages arrive as Server-Sent Events already rendered
// (and escaped) by the server, and are appended to the transcript. The page works without
// this script; it only saves a reload.
(function () {
  "use strict";
  var list = document.getElementById("transcript");
  if (!list || !list.hasAttribute("data-events") || !window.EventSource) return;
  var status = document.getElementById("live-status");
  var last = list.getAttribute("data-last") || "0";
  var es = new EventSource(list.getAttribute("data-events") + "?after=" + encodeURIComponent(last));

  function setStatus(text, on) {
    if (!status) return;
    status.textContent = text;
    status.classList.toggle("on", on);
  }
  function nearBottom() {
    return window.innerHeight + window.scrollY >= document.body.scrollHeight - 160;
  }

  es.addEventListener("open", function () { setStatus("Live: new messages appear below", true); });
  es.addEventListener("error", function () { setStatus("Reconnecting…", false); });
  es.addEventListener("message", function (ev) {
    if (document.getElementById("m" + ev.lastEventId)) return; // already on the page
    var follow = nearBottom();
    var tpl = document.createElement("template");
    tpl.innerHTML = ev.data;
    var li = tpl.content.firstElementChild;
    if (!li) return;
    li.classList.add("fresh");
    list.appendChild(li);
    list.setAttribute("data-last", ev.lastEventId);
    var empty = document.getElementById("empty");
    if (empty) empty.remove();
    if (follow) li.scrollIntoView({ block: "end", behavior: "smooth" });
  });
})();
