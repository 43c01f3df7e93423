// Waymark's live script: the conversation and inbox streams (server-sent
// events of the JSON API), the activity line, focus and announcements, and
// the slash-menu combobox. Everything else is htmx and server-rendered HTML.
(function () {
  "use strict";
  var L = {};
  function text(key, arg) {
    var s = L[key] || "";
    return arg === undefined ? s : s.replace("%s", arg).replace("%d", arg);
  }
  function announce(msg) {
    var live = document.getElementById("live");
    if (!live || !msg) return;
    live.textContent = "";
    window.requestAnimationFrame(function () { live.textContent = msg; });
  }
  function conv() { return document.getElementById("conversation"); }

  // Live regions (#conversation, #inbox) are swapped whole. A change the stream
  // reports while a request for the region is in flight may be older than that
  // request's answer or newer: every stream event counts, every request
  // remembers the count it started at, and a region swapped in from before the
  // latest event is fetched again.
  var regions = { conversation: { seen: 0, asked: 0 }, inbox: { seen: 0, asked: 0 } };
  function changed(id) {
    var r = regions[id], el = document.getElementById(id);
    r.seen++;
    if (el) window.htmx.trigger(el, "refresh");
  }
  function asked(id) { if (regions[id]) regions[id].asked = regions[id].seen; }
  function swapped(id) {
    var r = regions[id], el = document.getElementById(id);
    if (r && el && r.asked < r.seen) window.htmx.trigger(el, "refresh");
  }
  function snapshot(el) {
    return el ? { card: el.dataset.card, progress: el.dataset.progress, highlight: el.dataset.highlight,
      status: el.dataset.status, run: el.dataset.run } : {};
  }

  // --- the conversation ---
  var last = {}, runSource = null, runUUID = "";
  function setActivity(msg) {
    var a = document.getElementById("activity");
    if (a && msg) a.textContent = msg;
  }
  function activityOf(ev) {
    var e;
    try { e = JSON.parse(ev.data); } catch (x) { return ""; }
    var p = e.payload || {};
    switch (ev.type) {
      case "request": return text("activity.thinking");
      case "llm":
        if ((p.calls || []).some(function (c) { return /^update_/.test(c.tool || ""); })) return text("activity.proposing");
        return text("activity.thinking");
      case "tool":
        switch (p.tool) {
          case "read_page": case "read_record": case "list_open_points": case "load_skill": return text("activity.reading");
          case "set_progress": return text("activity.progress");
          case "highlight_record": return text("activity.highlight");
        }
        return text("activity.tool", p.tool || "");
      case "approval": return text("activity.proposing");
    }
    return "";
  }
  function followRun(s) {
    if (s.status !== "processing" || !s.run) {
      if (runSource) { runSource.close(); runSource = null; runUUID = ""; }
      return;
    }
    if (s.run === runUUID) return;
    if (runSource) runSource.close();
    runUUID = s.run;
    runSource = new EventSource("/api/runs/" + encodeURIComponent(s.run) + "/events");
    ["request", "llm", "tool", "approval", "progress", "highlight"].forEach(function (k) {
      runSource.addEventListener(k, function (ev) { setActivity(activityOf(ev)); });
    });
    runSource.addEventListener("end", function () { if (runSource) runSource.close(); runSource = null; });
  }
  function showHighlight(announceIt) {
    var h = document.querySelector("#preview .highlighted");
    if (!h) return;
    h.scrollIntoView({ block: "nearest" });
    if (announceIt) {
      var title = h.querySelector("h3, h4");
      announce(text("announce.highlight", title ? title.textContent : ""));
    }
  }
  // scrollMessages shows the newest messages: the list scrolls on its own
  // (max-height), and a swap or page load would otherwise leave it at its top,
  // the last outcome and the closing answer hidden below.
  function scrollMessages() {
    var ms = document.querySelector("#conversation .messages");
    if (ms) ms.scrollTop = ms.scrollHeight;
  }

  function afterConversationSwap() {
    var el = conv();
    if (!el) return;
    scrollMessages();
    var now = snapshot(el);
    if (now.card && now.card !== last.card) {
      var h = el.querySelector(".card h3, .question h3");
      if (h) { h.focus(); announce(text("announce.card", h.textContent)); }
    } else if (now.progress && now.progress !== last.progress) {
      var st = el.querySelector(".tour .state");
      if (st) announce(st.textContent.trim());
    }
    if (now.highlight && now.highlight !== last.highlight) showHighlight(true);
    if (last.status === "processing" && now.status !== "processing" && !now.card) announce(text("announce.done"));
    followRun(now);
    last = now;
  }
  function startConversation() {
    var el = conv();
    if (!el || !window.EventSource) return;
    last = snapshot(el);
    followRun(last);
    showHighlight(false);
    if (last.card) {
      // A card waiting when the page opens is where the editor continues.
      var h = el.querySelector(".card h3, .question h3");
      if (h) { h.focus(); announce(text("announce.card", h.textContent)); }
    }
    var src = new EventSource("/api/conversations/" + encodeURIComponent(el.dataset.id) + "/stream");
    // Every change of the conversation (the first event is its state now): swap the region in.
    src.addEventListener("conversation", function () { changed("conversation"); });
  }

  // --- the inbox ---
  function startInbox() {
    var el = document.getElementById("inbox");
    if (!el || !window.EventSource) return;
    var src = new EventSource("/api/inbox/stream");
    src.addEventListener("inbox", function () { changed("inbox"); });
  }
  var lastRuns = null;
  function afterInboxSwap() {
    var el = document.getElementById("inbox");
    if (!el) return;
    var runs = el.dataset.runs || "";
    if (lastRuns !== null && runs && runs !== lastRuns) {
      var known = lastRuns.split(",");
      var fresh = runs.split(",").filter(function (d) { return known.indexOf(d) < 0; });
      if (fresh.length) {
        var h = document.getElementById("card-heading-" + fresh[0]);
        if (h) announce(text("announce.card", h.textContent));
      }
    }
    lastRuns = runs;
  }

  // --- the slash menu: an ARIA combobox on the message input ---
  function setupCombo() {
    var input = document.getElementById("message");
    var list = document.getElementById("slash-list");
    if (!input || !list) return;
    var active = -1;
    function opts() {
      return Array.prototype.filter.call(list.querySelectorAll("[role=option]"), function (o) { return !o.hidden; });
    }
    function mark() {
      var os = opts();
      os.forEach(function (o, i) { o.setAttribute("aria-selected", i === active ? "true" : "false"); });
      if (os[active]) {
        input.setAttribute("aria-activedescendant", os[active].id);
        os[active].scrollIntoView({ block: "nearest" });
      } else input.removeAttribute("aria-activedescendant");
    }
    function open() { list.hidden = false; input.setAttribute("aria-expanded", "true"); }
    function close() { list.hidden = true; input.setAttribute("aria-expanded", "false"); active = -1; mark(); }
    function filter() {
      var q = input.value.slice(1).toLowerCase();
      Array.prototype.forEach.call(list.querySelectorAll("[role=option]"), function (o) {
        o.hidden = o.textContent.toLowerCase().indexOf(q) < 0;
      });
    }
    function choose(o) {
      close();
      input.value = "";
      // The request's source is the conversation region (it inherits the CSRF
      // header from <body>), not the input: the composer form's attributes
      // (hx-disabled-elt) must not apply to it.
      window.htmx.ajax("POST", input.dataset.skillUrl, { source: conv() || document.body, target: "#conversation",
        swap: "outerHTML", values: { skill: o.dataset.skill } });
      input.focus();
    }
    input.addEventListener("input", function () {
      if (input.value.charAt(0) === "/") {
        filter(); open();
        var n = opts().length;
        if (active < 0 || active >= n) active = n ? 0 : -1;
        mark();
      } else if (!list.hidden) close();
    });
    input.addEventListener("keydown", function (e) {
      if (list.hidden) {
        if (e.key === "ArrowDown" && input.value.charAt(0) === "/") { filter(); open(); active = 0; mark(); e.preventDefault(); }
        return;
      }
      var n = opts().length;
      if (e.key === "ArrowDown") { e.preventDefault(); active = n ? (active + 1) % n : -1; mark(); }
      else if (e.key === "ArrowUp") { e.preventDefault(); active = n ? (active - 1 + n) % n : -1; mark(); }
      else if (e.key === "Enter") { e.preventDefault(); if (opts()[active]) choose(opts()[active]); }
      else if (e.key === "Escape") { e.preventDefault(); close(); }
    });
    input.addEventListener("blur", function (e) {
      if (!e.relatedTarget || !list.contains(e.relatedTarget)) window.requestAnimationFrame(close);
    });
    list.addEventListener("mousedown", function (e) { e.preventDefault(); });
    list.addEventListener("click", function (e) {
      var o = e.target.closest("[role=option]");
      if (o) choose(o);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var el = document.getElementById("labels");
    if (el) { try { L = JSON.parse(el.textContent); } catch (x) { L = {}; } }
    scrollMessages();
    startConversation();
    startInbox();
    afterInboxSwap();
    setupCombo();
    document.body.addEventListener("htmx:beforeRequest", function (ev) {
      var t = ev.detail && ev.detail.target;
      if (t && t.id) asked(t.id);
    });
    document.body.addEventListener("htmx:afterSettle", function (ev) {
      var t = ev.detail && ev.detail.elt;
      if (!t) return;
      if (t.id === "conversation" || (t.closest && t.closest("#conversation"))) { afterConversationSwap(); swapped("conversation"); }
      if (t.id === "inbox" || (t.closest && t.closest("#inbox"))) { afterInboxSwap(); swapped("inbox"); }
    });
    document.body.addEventListener("htmx:afterRequest", function (ev) {
      var f = ev.detail && ev.detail.elt;
      if (f && f.id === "composer" && ev.detail.successful) f.reset();
    });
  });
})();
