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

  // Live regions (#conversation, #inbox) are swapped whole, by the answers of
  // actions and by refreshes the streams ask for, which may come back in any
  // order. Two rules keep the newest state on the screen:
  // - every stream event counts, and every request remembers the count when
  //   it started (on its own xhr, not the region: two requests for a region
  //   may be in flight at once); a region swapped in from a request that
  //   started before the latest event is fetched again;
  // - every conversation region carries its version (data-version, the
  //   conversation's updatedAt in µs): the answer of a request that started
  //   before the latest event is not swapped in at all when its version is
  //   older than the one shown (an action's answer overtaken by the live
  //   update). A request started after the latest event shows the server's
  //   state as it is, whatever its version (a clock set back).
  var regions = { conversation: { seen: 0 }, inbox: { seen: 0 } };
  function refresh(id) {
    var el = document.getElementById(id);
    if (el) window.htmx.trigger(el, "refresh");
  }
  function changed(id) {
    regions[id].seen++;
    refresh(id);
  }
  function versionOf(el) { return el ? Number(el.getAttribute("data-version") || 0) : 0; }
  function regionOf(target) {
    if (!target || !target.id) return "";
    return regions[target.id] ? target.id : "";
  }
  function behind(id, xhr) {
    var r = regions[id];
    return !!(r && xhr && xhr.__waymarkSeen !== undefined && xhr.__waymarkSeen < r.seen);
  }
  function snapshot(el) {
    return el ? { card: el.dataset.card, progress: el.dataset.progress, highlight: el.dataset.highlight,
      status: el.dataset.status, run: el.dataset.run } : {};
  }

  // --- what the editor is told when an action did not get through ---
  // The message stays outside the swapped regions; the typed text stays in
  // the composer (and in sessionStorage, for a login in between).
  // While the server cannot be reached or the session ended (cut), what
  // cannot work meanwhile is disabled: the answers of a card or question,
  // the region's buttons, Senden. The message itself is fixed at the top of
  // the window (app.css), where the editor sees it whatever she scrolled to.
  var cutOff = false;
  function applyCutOff() {
    var els = document.querySelectorAll("#conversation fieldset, #conversation button, #inbox fieldset, #inbox button");
    Array.prototype.forEach.call(els, function (el) {
      if (cutOff && !el.disabled) { el.disabled = true; el.setAttribute("data-cut", ""); }
      else if (!cutOff && el.hasAttribute("data-cut")) { el.disabled = false; el.removeAttribute("data-cut"); }
    });
    syncComposer();
  }
  function notice(msg, loginLink, cut) {
    if (cutOff !== !!(msg && cut)) { cutOff = !!(msg && cut); applyCutOff(); }
    var n = document.getElementById("connection");
    if (!n && !msg) return;
    if (!n) {
      // A screen without a composer: the message goes first in <main>.
      n = document.createElement("p");
      n.id = "connection";
      n.className = "error";
      n.setAttribute("role", "alert");
      var main = document.querySelector("main") || document.body;
      main.insertBefore(n, main.firstChild);
    }
    n.textContent = "";
    if (!msg) { n.hidden = true; return; }
    n.hidden = false;
    var p = document.createElement("span");
    p.textContent = msg;
    n.appendChild(p);
    if (loginLink) {
      var a = document.createElement("a");
      a.href = "/login?next=" + encodeURIComponent(location.pathname);
      a.textContent = text("live.login");
      n.appendChild(document.createTextNode(" "));
      n.appendChild(a);
    }
  }
  // probe asks the server until it answers again after an action could not
  // reach it; then the message goes and the regions are fetched anew.
  var probing = false;
  function probe() {
    if (probing) return;
    probing = true;
    var wait = 500;
    (function again() {
      window.fetch("/readyz", { cache: "no-store" }).then(function (r) {
        if (!r.ok) throw new Error("not ready");
        probing = false;
        notice("");
        Object.keys(regions).forEach(function (id) { changed(id); });
      }).catch(function () {
        window.setTimeout(again, wait);
        wait = Math.min(wait * 2, 8000);
      });
    })();
  }
  function draftKey() { var el = conv(); return el ? "waymark-draft-" + el.dataset.id : ""; }
  function keepDraft() {
    var input = document.getElementById("message"), k = draftKey();
    if (!input || !k) return;
    try { if (input.value) sessionStorage.setItem(k, input.value); else sessionStorage.removeItem(k); } catch (x) { /* private mode */ }
  }
  function restoreDraft() {
    var input = document.getElementById("message"), k = draftKey();
    if (!input || !k || input.value) return;
    try { input.value = sessionStorage.getItem(k) || ""; } catch (x) { /* private mode */ }
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

  // syncComposer: Senden is disabled while a turn runs (the server would
  // refuse the message as busy); the typed text stays.
  // Stopp beside it shows while a turn runs; once the turn ended, a Stopp
  // that had the focus hands it to the message box.
  function syncComposer() {
    var el = conv(), f = document.getElementById("composer");
    if (!el || !f) return;
    var running = el.dataset.status === "processing";
    var b = f.querySelector("button[type=submit]");
    if (b) b.disabled = running || cutOff;
    var stop = document.getElementById("stop");
    if (stop && stop.hidden === running) {
      var had = document.activeElement === stop;
      stop.hidden = !running;
      if (had && !running) { var m = document.getElementById("message"); if (m) m.focus(); }
    }
  }

  // --- the reply as it streams in ---
  // A stream event that changes nothing but the draft (the model's reply
  // growing, several times a second) updates the streaming text in place:
  // the region is not redrawn, so nothing in it moves or loses the focus.
  // Any other change fetches the region.
  var lastKey = "", lastDraft = "";
  function streamedInPlace(ev) {
    var e;
    try { e = JSON.parse(ev.data); } catch (x) { lastKey = ""; return false; }
    var draft = e.draft || "";
    delete e.draft;
    var key = JSON.stringify(e), same = key === lastKey;
    lastKey = key;
    lastDraft = draft;
    var el = conv();
    if (!same || !draft || !el || el.dataset.status !== "processing") return false;
    return showDraft();
  }
  // showDraft puts the latest draft into the streaming message; false when
  // the region has none to put it in (then it is fetched).
  function showDraft() {
    var p = document.querySelector("#conversation .message.streaming .text p");
    if (!p) return false;
    if (p.textContent !== lastDraft && lastDraft.indexOf(p.textContent) === 0) {
      var ms = p.closest(".messages"), atEnd = ms && ms.scrollHeight - ms.scrollTop - ms.clientHeight < 40;
      p.textContent = lastDraft;
      if (atEnd) scrollMessages();
    }
    return true;
  }

  function afterConversationSwap() {
    var el = conv();
    if (!el) return;
    syncComposer();
    if (el.dataset.status === "processing") showDraft();
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
    syncComposer();
    restoreDraft();
    follow("conversation", "/api/conversations/" + encodeURIComponent(el.dataset.id) + "/stream");
  }
  // follow opens the stream of a live region. Every event (the first is the
  // state now) asks for the region; after the stream was broken and is open
  // again the region is fetched whatever the stream resumes with. A stream the
  // server refused for good (the session ended) says so.
  function follow(id, url) {
    var broken = false, wait = 500;
    function open() {
      var src = new EventSource(url);
      src.addEventListener(id, function (ev) {
        if (id === "conversation" && streamedInPlace(ev)) return;
        changed(id);
      });
      src.addEventListener("open", function () {
        wait = 500;
        if (broken) { broken = false; notice(""); changed(id); }
      });
      src.addEventListener("error", function () {
        broken = true;
        if (src.readyState !== 2) { notice(text("live.reconnecting"), false, true); return; }
        // Closed by the browser: the session ended (401), or the server or
        // the network is away — then the stream is opened again, later.
        src.close();
        window.fetch("/api/me", { credentials: "same-origin" }).then(function (r) {
          if (r.status === 401) { notice(text("live.expired"), true, true); return; }
          notice(text("live.reconnecting"), false, true);
          window.setTimeout(open, wait);
          wait = Math.min(wait * 2, 8000);
        }, function () {
          notice(text("live.offline"), false, true);
          window.setTimeout(open, wait);
          wait = Math.min(wait * 2, 8000);
        });
      });
    }
    open();
  }

  // --- the inbox ---
  function startInbox() {
    var el = document.getElementById("inbox");
    if (!el || !window.EventSource) return;
    follow("inbox", "/api/inbox/stream");
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
      keepDraft();
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
    var input = document.getElementById("message");
    if (input) input.addEventListener("input", keepDraft);
    // A 401 (the session ended) is an answer the page handles (afterRequest),
    // not an error of the page: htmx neither swaps nor logs it.
    if (window.htmx.config.responseHandling) {
      window.htmx.config.responseHandling.unshift({ code: "401", swap: false, error: false });
    }
    document.body.addEventListener("htmx:beforeRequest", function (ev) {
      var d = ev.detail || {}, id = regionOf(d.target);
      if (id && d.xhr) d.xhr.__waymarkSeen = regions[id].seen;
    });
    // Never an older conversation over a newer one: an answer that was
    // overtaken by a refresh is dropped (and the region fetched again when
    // the stream knows of something newer still).
    document.body.addEventListener("htmx:beforeSwap", function (ev) {
      var d = ev.detail || {};
      if (regionOf(d.target) !== "conversation" || !d.shouldSwap || !d.xhr) return;
      var m = /data-version="(\d+)"/.exec(d.serverResponse || d.xhr.responseText || "");
      if (m && Number(m[1]) < versionOf(conv()) && behind("conversation", d.xhr)) {
        d.shouldSwap = false;
        refresh("conversation");
      }
    });
    document.body.addEventListener("htmx:afterSettle", function (ev) {
      var t = ev.detail && ev.detail.elt, xhr = ev.detail && ev.detail.xhr;
      if (!t) return;
      if (cutOff) applyCutOff();
      if (t.id === "conversation" || (t.closest && t.closest("#conversation"))) {
        afterConversationSwap();
        if (behind("conversation", xhr)) refresh("conversation");
      }
      if (t.id === "inbox" || (t.closest && t.closest("#inbox"))) {
        afterInboxSwap();
        if (behind("inbox", xhr)) refresh("inbox");
      }
    });
    document.body.addEventListener("htmx:afterRequest", function (ev) {
      var d = ev.detail || {}, f = d.elt;
      if (d.xhr && d.xhr.status === 401) notice(text("live.expired"), true, true);
      else if (d.successful) notice("");
      if (f && f.id === "composer") {
        // The box is emptied only when the message was taken; a refusal
        // (shown in the conversation) keeps the text.
        if (d.successful && d.xhr && d.xhr.status < 300 && !d.xhr.getResponseHeader("X-Waymark-Refused")) {
          f.reset();
          keepDraft();
        }
        window.setTimeout(syncComposer, 0);
      }
    });
    // An action that did not reach the server, or that it did not take.
    document.body.addEventListener("htmx:sendError", function () { notice(text("live.offline"), false, true); probe(); });
    document.body.addEventListener("htmx:responseError", function (ev) {
      var xhr = ev.detail && ev.detail.xhr;
      // The server's own sentence where it gave one (text/plain: invalid
      // characters, TYPO3 not answering), else the status.
      var said = xhr && /^text\/plain/.test(xhr.getResponseHeader("Content-Type") || "") ? xhr.responseText.trim() : "";
      notice(said && said.length < 300 ? said : text("live.failed", xhr ? String(xhr.status) : "?"));
    });
  });
})();
