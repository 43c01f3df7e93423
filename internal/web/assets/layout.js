// Waymark's layout script: the panel buttons of narrow screens (the
// conversation list and the preview open above the conversation), the copy
// buttons of new tokens, the slash menu's "no match" line, confirmations of
// plain forms, and a sensible focus when a swap removed the focused element.
// The live updates themselves are app.js.
(function () {
  "use strict";

  // --- narrow screens: the conversation list and the preview behind buttons ---
  function togglePanel(btn) {
    var layout = document.getElementById("chat-layout");
    var name = btn.dataset.panel;
    if (!layout || !name) return;
    var open = btn.getAttribute("aria-expanded") !== "true";
    // One panel at a time: opening one closes the other.
    Array.prototype.forEach.call(layout.querySelectorAll(".panel-toggles [data-panel]"), function (b) {
      b.setAttribute("aria-expanded", "false");
      layout.classList.remove("show-" + b.dataset.panel);
    });
    if (open) {
      btn.setAttribute("aria-expanded", "true");
      layout.classList.add("show-" + name);
      var panel = document.getElementById(name);
      var h = panel && panel.querySelector("h2");
      if (h) { h.setAttribute("tabindex", "-1"); h.focus(); }
    }
  }

  // --- the slash menu says when nothing matches ---
  function setupSlashNone() {
    var input = document.getElementById("message");
    var list = document.getElementById("slash-list");
    var none = document.getElementById("slash-none");
    if (!input || !list || !none) return;
    function update() {
      var shown = !list.hidden && !list.querySelector("[role=option]:not([hidden])");
      if (shown === !none.hidden) return;
      none.hidden = !shown;
      // A status region announces the text it receives, not a shown element.
      none.textContent = "";
      if (shown) window.requestAnimationFrame(function () { none.textContent = none.dataset.text; });
    }
    input.addEventListener("input", update);
    input.addEventListener("keydown", function () { window.requestAnimationFrame(update); });
    input.addEventListener("blur", function () { window.requestAnimationFrame(update); });
  }

  // --- focus: a swap that removed the focused element (the answered card,
  // the × of the tour, the released card in the inbox) would leave it on the
  // page body; it goes to what the editor reads or does next instead: a new
  // card or question, else the transcript (not the message field: on a phone
  // that would open the keyboard). Nothing moves when the focus was elsewhere.
  var lost = null;
  function refocus(region) {
    var target;
    if (region.id === "conversation") {
      target = region.querySelector(".card h3, .question h3") || region.querySelector(".messages");
    } else {
      target = region.querySelector(".card h3") || document.getElementById("inbox-status") || region;
    }
    if (!target) return;
    if (!target.matches("input, button, select, textarea, a[href], [tabindex]")) target.setAttribute("tabindex", "-1");
    target.focus();
  }

  // sameControl is the control of the new region that stands where gone
  // stood — a labelled control outside a card (the × of the tour) that a
  // live refresh rendered anew: the focus stays on it, as nothing changed
  // for the editor. An answer of a card is not one: the new card's heading
  // takes the focus then.
  function sameControl(region, gone) {
    var label = gone.getAttribute && gone.getAttribute("aria-label");
    if (!label || (gone.closest && gone.closest(".card, .question"))) return null;
    var all = region.querySelectorAll("[aria-label]");
    for (var i = 0; i < all.length; i++) {
      var c = all[i];
      if (c.tagName === gone.tagName && c.getAttribute("aria-label") === label && !c.disabled && !c.closest(".card, .question")) return c;
    }
    return null;
  }

  function copy(btn) {
    var src = document.getElementById(btn.dataset.copy);
    if (!src) return;
    var done = function () {
      var st = document.getElementById(btn.dataset.copy + "-copied");
      if (st) st.textContent = btn.dataset.done || "";
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(valueOf(src)).then(done, function () { select(src); });
    } else {
      select(src);
      try { if (document.execCommand("copy")) done(); } catch (x) { /* selected: the editor copies by hand */ }
    }
  }
  function valueOf(el) { return el.tagName === "INPUT" ? el.value : el.textContent.trim(); }
  function select(el) {
    if (el.tagName === "INPUT") { el.focus(); el.select(); return; }
    var r = document.createRange();
    r.selectNodeContents(el);
    var s = window.getSelection();
    s.removeAllRanges();
    s.addRange(r);
  }

  // --- times in the reader's time zone and language ---
  // The server writes <time datetime="…Z"> with the time in UTC; the page
  // shows it as the reader's clock reads it (the UTC time stays as title).
  function localTimes(root) {
    var lang = document.documentElement.lang || undefined;
    Array.prototype.forEach.call((root || document).querySelectorAll("time[datetime]"), function (t) {
      if (t.hasAttribute("data-local")) return;
      var d = new Date(t.getAttribute("datetime"));
      if (isNaN(d.getTime())) return;
      var opts = { dateStyle: "medium", timeStyle: t.hasAttribute("data-seconds") ? "medium" : "short" };
      t.title = t.textContent.trim();
      t.textContent = d.toLocaleString(lang, opts);
      t.setAttribute("data-local", "");
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    setupSlashNone();
    localTimes(document);
    document.body.addEventListener("htmx:afterSettle", function (e) { localTimes(e.detail && e.detail.elt && e.detail.elt.parentNode || document); });
    document.addEventListener("click", function (e) {
      var t = e.target.closest && e.target.closest("[data-panel], [data-copy]");
      if (!t) return;
      if (t.dataset.panel) togglePanel(t);
      else copy(t);
    });
    // Escape closes an open panel (an Escape the slash menu took is not
    // this one) and hands the focus back to its button.
    document.addEventListener("keydown", function (e) {
      if (e.key !== "Escape" || e.defaultPrevented) return;
      var open = document.querySelector(".panel-toggles [data-panel][aria-expanded=true]");
      if (!open) return;
      e.preventDefault();
      togglePanel(open);
      open.focus();
    });
    // Plain (non-htmx) forms that change something for good ask first.
    document.addEventListener("submit", function (e) {
      var f = e.target, b = e.submitter;
      var msg = (b && b.dataset.confirm) || f.dataset.confirm;
      if (msg && !window.confirm(msg)) e.preventDefault();
    });
    // The focused element is noted when a request starts (the answer's
    // fieldset is disabled while it is in flight, which already drops the
    // focus to the body) and before every swap; focusing anything else
    // forgets it.
    var note = function () {
      var a = document.activeElement;
      if (a && a !== document.body) lost = a;
    };
    document.body.addEventListener("htmx:beforeRequest", note);
    document.body.addEventListener("htmx:beforeSwap", note);
    document.addEventListener("focusin", function () { lost = null; });
    document.body.addEventListener("htmx:afterSettle", function () {
      var a = document.activeElement;
      if (!lost || lost.isConnected || (a && a !== document.body)) return;
      var gone = lost;
      lost = null;
      var el = document.getElementById("conversation") || document.getElementById("inbox");
      if (!el) return;
      var again = sameControl(el, gone);
      if (again) again.focus();
      else refocus(el);
    });
  });
})();
