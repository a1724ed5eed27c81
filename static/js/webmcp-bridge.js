/*
 * webmcp-bridge.js: answers WebMCP agents from htmx forms without leaving the page.
 *
 * A WebMCP browser turns every <form toolname> into an agent tool. When an agent submits one,
 * the `submit` event has `agentInvoked === true`, and the page may answer the call itself with
 * `event.respondWith()` (after `preventDefault()`), instead of letting the form navigate.
 *
 * htmx would otherwise cancel that submit and swap the response without answering the agent,
 * which makes the tool call fail. So this listener runs first (capture phase, on document),
 * sends the same request htmx would send (marked as an agent's, for the activity log), swaps
 * the partial where htmx would have put it, waits until Chromium has registered the tool forms
 * it brought, and then answers with the JSON-LD result embedded in the partial. So an answer
 * never describes a page the agent cannot see yet: "call save_event" finds save_event there.
 * A swap must keep the invoked form (use a morph when the target holds it): removing a form
 * while its call is pending cancels the call.
 *
 * An agent's fill must not also set off htmx's conveniences for people (active search, showing
 * the chosen event): Chromium fills a tool form and submits it in one task, so each `input` or
 * `change` on a tool form is held for one task and dropped if an agent submit of that form came
 * in the meantime; otherwise it is passed on to htmx unchanged. (Those events are trusted and
 * look exactly like a person's, so waiting for the submit is the only way to tell.)
 *
 * Without JavaScript none of this runs: forms navigate, and the JSON-LD of the page they land
 * on is the agent's answer. People's submits are left to htmx untouched.
 */
(function () {
  "use strict";

  var AGENT_HEADER = "WebMCP-Agent-Invoked";
  var TOOL_FORMS = "form[toolname][tooldescription]";
  // An answer waits for the tools its swap brought, but not forever (a form Chromium refuses).
  var REGISTRATION_WAIT_MS = 2000;

  function attr(form, name) {
    return form.getAttribute(name) || form.getAttribute("data-" + name);
  }

  /* The method and URL htmx would use for this form, with the fields of a GET in the query. */
  function requestFor(form, submitter) {
    var method = "get";
    var action = form.getAttribute("action") || location.href;
    ["get", "post"].forEach(function (verb) {
      var url = attr(form, "hx-" + verb);
      if (url !== null) { method = verb; action = url || action; }
    });
    var body = new FormData(form, submitter || undefined);
    var url = new URL(action, location.href);
    var init = {
      method: method.toUpperCase(),
      credentials: "same-origin",
      headers: { "HX-Request": "true", "HX-Request-Type": "partial", "Accept": "text/html" },
    };
    init.headers[AGENT_HEADER] = "true";
    if (method === "get") {
      body.forEach(function (value, key) { url.searchParams.append(key, value); });
    } else {
      init.body = new URLSearchParams(body);
    }
    return { url: url, init: init };
  }

  /* The result the page embedded for agents: its <script type="application/ld+json">. */
  function readResult(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var block = doc.querySelector('script[type="application/ld+json"]');
    if (!block) {
      throw new Error("The page answered without a result.");
    }
    return JSON.parse(block.textContent);
  }

  /* Put the partial where htmx would have, with htmx's own swap (history, out-of-band parts);
     resolves when it is in place. */
  function swapLikeHtmx(form, request, html) {
    var selector = attr(form, "hx-target");
    var target = selector ? document.querySelector(selector) : form;
    if (!target || !window.htmx) {
      return Promise.resolve();
    }
    var push = attr(form, "hx-push-url");
    return window.htmx.swap({
      sourceElement: form,
      target: target,
      swap: attr(form, "hx-swap") || "innerHTML",
      text: html,
      push: push === "true" ? request.url.pathname + request.url.search : push,
      request: { action: request.url.href },
    });
  }

  /* Resolves once Chromium lists every tool form of the page: it registers a form a moment
     after the form enters the document, and tells with a `toolchange`. */
  function toolsRegistered() {
    var modelContext = document.modelContext;
    if (!modelContext) {
      return Promise.resolve();
    }
    var wanted = Array.prototype.map.call(document.querySelectorAll(TOOL_FORMS), function (form) {
      return form.getAttribute("toolname");
    });
    return new Promise(function (resolve) {
      var giveUp = setTimeout(done, REGISTRATION_WAIT_MS);
      function done() {
        clearTimeout(giveUp);
        modelContext.removeEventListener("toolchange", check);
        resolve();
      }
      function check() {
        modelContext.getTools().then(function (tools) {
          var registered = tools.map(function (tool) { return tool.name; });
          if (wanted.every(function (name) { return registered.indexOf(name) !== -1; })) {
            done();
          }
        }, done);
      }
      modelContext.addEventListener("toolchange", check);
      check();
    });
  }

  /* The envelope an agent gets when the site could not be reached at all. Its sentences are
     the page's own (data-unreachable-* on <body>, from the site's message catalog), so they
     are in the page's language; English only if the page has none. */
  function unreachable(form) {
    var page = document.body.dataset;
    return {
      action: form.getAttribute("toolname"),
      status: "internal_error",
      message: page.unreachableMessage || "The site could not be reached. Nothing was changed.",
      retryable: true,
      nextAction: page.unreachableNextAction ||
        "Tell the user the site is unreachable; retry later, not at once.",
    };
  }

  /* Fills waiting one task to learn whether an agent made them: form -> {events, byAgent}. */
  var heldFills = new WeakMap();
  var passedOn = new WeakSet();

  function isToolForm(form) {
    return form instanceof HTMLFormElement && form.hasAttribute("toolname");
  }

  function holdFill(event) {
    var form = event.target.form;
    if (passedOn.has(event) || !isToolForm(form)) {
      return;
    }
    event.stopImmediatePropagation();
    var fill = heldFills.get(form);
    if (!fill) {
      fill = { events: [], byAgent: false };
      heldFills.set(form, fill);
      setTimeout(function () {
        heldFills.delete(form);
        if (!fill.byAgent) {
          fill.events.forEach(passOn);
        }
      }, 0);
    }
    fill.events.push(event);
  }

  /* Dispatch a copy of a held event where it happened, for htmx and everyone else. */
  function passOn(event) {
    var copy = new event.constructor(event.type, event);
    passedOn.add(copy);
    event.target.dispatchEvent(copy);
  }

  document.addEventListener("input", holdFill, true);
  document.addEventListener("change", holdFill, true);

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!event.agentInvoked || !isToolForm(form)) {
      return;
    }
    var fill = heldFills.get(form);
    if (fill) {
      fill.byAgent = true; // the agent's own fill: the request below is the only one
    }
    if (!attr(form, "hx-get") && !attr(form, "hx-post")) {
      return; // a plain form: let it navigate; the next page's JSON-LD is the answer
    }
    event.preventDefault();
    event.stopPropagation(); // htmx must not send it a second time

    var request = requestFor(form, event.submitter);
    form.setAttribute("aria-busy", "true");
    event.respondWith(fetch(request.url, request.init).then(function (response) {
      return response.text();
    }).then(function (html) {
      var result = readResult(html);
      // The page first shows what the answer describes; a failed swap still answers.
      return swapLikeHtmx(form, request, html).then(toolsRegistered).catch(function (error) {
        console.warn("WebMCP bridge: the swap failed:", error);
      }).then(function () {
        return result;
      });
    }).catch(function (error) {
      console.warn("WebMCP bridge:", error.message);
      return unreachable(form);
    }).finally(function () {
      form.removeAttribute("aria-busy");
    }));
  }, true);
})();
