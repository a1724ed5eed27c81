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
 * the partial where htmx would put it, and answers with the JSON-LD result the partial starts
 * with. When the swap added, removed or changed a tool form, the answer waits until Chromium
 * has registered the page's tool forms as they now are: an answer never names a tool (or an id
 * among a tool's choices) the page does not offer yet. The history entry the swap would push
 * (hx-push-url) follows the answer.
 *
 * The invoked form must stay in the page until the call is answered: Chromium cancels a call
 * whose form is removed or replaced ("Tool execution cancelled, since tool definition was
 * updated"). So a swap may morph a target that holds the form, never replace it; failures the
 * server routes elsewhere (`HX-Retarget`, `HX-Reswap`: the error slot beside the form) go
 * there, as htmx would put them; and a swap that would still remove the form is not made (the
 * agent is answered all the same, and the console says why).
 *
 * An agent's fill must not also set off htmx's conveniences for people (active search, showing
 * the chosen event): Chromium fills a tool form and submits it in one task, so each `input` or
 * `change` on a tool form is held for one task and dropped if an agent submit of that form came
 * in the meantime; otherwise it is passed on to htmx unchanged. (Those events are trusted and
 * look exactly like a person's, so waiting for the submit is the only way to tell.) The form
 * is sent as Chromium filled it: Chromium fills only the controls whose value the call changes
 * and gives no sign of a value given again unchanged, so the bridge cannot tell the conditions
 * a call left out from those it repeated, and leaves them all as they are.
 *
 * Without JavaScript none of this runs: forms navigate, and the JSON-LD of the page they land
 * on is the agent's answer. People's submits are left to htmx untouched.
 */
(function () {
  "use strict";

  var AGENT_HEADER = "WebMCP-Agent-Invoked";
  var TOOL_FORMS = "form[toolname][tooldescription]";
  // A control outside its form, tied to it by form="id", belongs to that form's tool too.
  var TOOL_PARTS = TOOL_FORMS + ", [form]";
  // How a partial starts (webmcp/partial.html): its result, then what people see.
  var RESULT_START = '<script type="application/ld+json">';
  var RESULT_END = "</script>";
  // htmx swap styles that put new nodes in place of the target, or of its content.
  var REPLACING_SWAPS = ["innerHTML", "outerHTML", "textContent", "delete"];
  // An answer waits for the tools its swap brought, but not forever (a form Chromium refuses).
  var REGISTRATION_WAIT_MS = 2000;

  function attr(element, name) {
    return element.getAttribute(name) || element.getAttribute("data-" + name);
  }

  function each(list, callback) {
    Array.prototype.forEach.call(list, callback);
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
      // A blank field means "not given" to the server: leaving it out keeps the address (and
      // the history entry it becomes) clean, as people.js does for htmx's requests.
      body.forEach(function (value, key) { if (value !== "") { url.searchParams.append(key, value); } });
    } else {
      init.body = new URLSearchParams(body);
    }
    return { url: url, init: init };
  }

  /* The result the partial embeds for agents: the JSON-LD block it starts with, read without
     parsing the rest (htmx parses that once, to swap it). */
  function readResult(html) {
    var start = html.indexOf(RESULT_START);
    var end = start === -1 ? -1 : html.indexOf(RESULT_END, start);
    if (end === -1) {
      throw new Error("The page answered without a result.");
    }
    return JSON.parse(html.slice(start + RESULT_START.length, end));
  }

  /* Where the answer goes: where the server sent it (HX-Retarget/HX-Reswap: a failure goes to
     the error slot beside the form), else the form's hx-target and hx-swap, as in htmx. */
  function placement(form, response) {
    var selector = response.headers.get("HX-Retarget") || attr(form, "hx-target");
    return {
      target: selector ? document.querySelector(selector) : form,
      swap: response.headers.get("HX-Reswap") || attr(form, "hx-swap") || "innerHTML",
    };
  }

  /* Whether swapping there would take the invoked form out of the page (a morph keeps it). */
  function wouldRemove(place, form) {
    var style = place.swap.split(" ")[0];
    return REPLACING_SWAPS.indexOf(style) !== -1 && place.target.contains(form);
  }

  /* Whether a DOM change touched a tool's form or its controls (the tool may have changed). */
  function touchesTools(record) {
    var element = record.target.nodeType === 1 ? record.target : record.target.parentElement;
    if (element && (element.closest(TOOL_FORMS) || element.closest("[form]"))) {
      return true;
    }
    return [record.addedNodes, record.removedNodes].some(function (nodes) {
      return Array.prototype.some.call(nodes, function (node) {
        return node.nodeType === 1 && (node.matches(TOOL_PARTS) || !!node.querySelector(TOOL_PARTS));
      });
    });
  }

  /* Swap the partial with htmx's own swap (out-of-band parts included); resolves with whether
     the swap touched a tool form. The history entry comes later (see `pushHistory`). */
  function swapLikeHtmx(form, place, html) {
    var toolsTouched = false;
    function note(records) {
      toolsTouched = toolsTouched || records.some(touchesTools);
    }
    var watcher = new MutationObserver(note);
    watcher.observe(document.body,
                    { subtree: true, childList: true, attributes: true, characterData: true });
    return window.htmx.swap({
      sourceElement: form,
      target: place.target,
      swap: place.swap,
      text: html,
    }).then(function () {
      note(watcher.takeRecords());
      return toolsTouched;
    }).finally(function () {
      watcher.disconnect();
    });
  }

  /* The history entry htmx would have pushed with the swap (hx-push-url), pushed by htmx once
     the agent has its answer: Chromium takes several milliseconds over a same-document
     navigation (and the favicon it then reloads), which the agent need not wait for. */
  function pushHistory(form, request) {
    var push = attr(form, "hx-push-url");
    if (!push || push === "false" || !window.htmx) {
      return;
    }
    window.htmx.swap({
      sourceElement: form,
      target: form,
      swap: "none",
      text: "",
      push: push === "true" ? request.url.pathname + request.url.search : push,
    });
  }

  /* The values each choice of a form offers (radio groups and selects), by control name. */
  function choicesOf(form) {
    var choices = {};
    function offer(name, value) {
      (choices[name] = choices[name] || []).push(value);
    }
    each(form.elements, function (control) {
      if (!control.name || control.disabled) {
        return;
      }
      if (control.type === "radio") {
        offer(control.name, control.value);
      } else if (control.tagName === "SELECT") {
        each(control.options, function (option) {
          if (!option.disabled) { offer(control.name, option.value); }
        });
      }
    });
    return choices;
  }

  function sameValues(a, b) {
    var distinct = function (values) {
      return values.filter(function (v, i) { return values.indexOf(v) === i; }).sort().join("\n");
    };
    return distinct(a) === distinct(b);
  }

  /* Whether Chromium's tools are the page's tool forms as they are now: every form has its
     tool, and each choice the tool offers is the form's (the ids an answer may name). */
  function registered(tools) {
    var byName = {};
    tools.forEach(function (tool) { byName[tool.name] = tool; });
    return Array.prototype.every.call(document.querySelectorAll(TOOL_FORMS), function (form) {
      var tool = byName[form.getAttribute("toolname")];
      if (!tool) {
        return false;
      }
      var properties = (tool.inputSchema && tool.inputSchema.properties) || {};
      var choices = choicesOf(form);
      return Object.keys(choices).every(function (name) {
        var property = properties[name] || {};
        var offered = property.enum || (property.items && property.items.enum);
        return !offered || sameValues(offered, choices[name]);
      });
    });
  }

  /* Resolves once Chromium has registered the page's tool forms as they are now: it does so a
     moment after a form changes, and then fires `toolchange`. */
  function toolsRegistered() {
    var modelContext = document.modelContext;
    if (!modelContext) {
      return Promise.resolve();
    }
    return new Promise(function (resolve) {
      var giveUp = setTimeout(done, REGISTRATION_WAIT_MS);
      function done() {
        clearTimeout(giveUp);
        modelContext.removeEventListener("toolchange", check);
        resolve();
      }
      function check() {
        modelContext.getTools().then(function (tools) {
          if (registered(tools)) { done(); }
        }, done);
      }
      modelContext.addEventListener("toolchange", check);
      check();
    });
  }

  /* Put the answer in the page; resolves once the page offers what it describes. */
  function show(form, response, html) {
    var place = placement(form, response);
    if (!place.target || !window.htmx) {
      return Promise.resolve();
    }
    if (wouldRemove(place, form)) {
      console.warn("WebMCP bridge: not swapped: " + place.swap + " of " + (attr(form, "hx-target")
                   || "the form") + " would remove the invoked form and cancel the call.");
      return Promise.resolve();
    }
    return swapLikeHtmx(form, place, html).then(function (toolsChanged) {
      return toolsChanged ? toolsRegistered() : undefined;
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

  /* Once the page is idle after loading, swap twice into a detached element and list the
     tools: an engine compiles a function when it first runs, and htmx's first swap (plus its
     marking of the history entry) would otherwise slow the agent's first call by tens of
     milliseconds. Nothing on the page changes. */
  function warmUp() {
    if (!window.htmx) {
      return;
    }
    var scratch = document.createElement("div");
    var part = '<form hx-get="."><label>A <input name="a"></label></form>';
    window.htmx.swap({ target: scratch, swap: "innerHTML", text: part }).then(function () {
      return window.htmx.swap({ target: scratch, swap: "innerMorph", text: part });
    }).then(function () {
      return document.modelContext && document.modelContext.getTools();
    }).catch(function () {});
  }

  (window.requestIdleCallback || setTimeout)(warmUp);

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

    // Nothing may throw between preventDefault() and respondWith(): the browser would end the
    // call as the site's programming error, unanswered. So the request is built inside the
    // answer, where a failure (a submitter the form no longer owns, say) is still answered.
    var submitter = event.submitter;
    var request = null;
    var shown = false;
    form.setAttribute("aria-busy", "true");
    event.respondWith(Promise.resolve().then(function () {
      request = requestFor(form, submitter);
      return fetch(request.url, request.init);
    }).then(function (response) {
      return response.text().then(function (html) {
        var result = readResult(html);
        // The page first shows what the answer describes; a failed swap still answers.
        return show(form, response, html).then(function () {
          shown = true;
        }, function (error) {
          console.warn("WebMCP bridge: the swap failed:", error);
        }).then(function () {
          return result;
        });
      });
    }).catch(function (error) {
      console.warn("WebMCP bridge:", error.message);
      return unreachable(form);
    }).finally(function () {
      form.removeAttribute("aria-busy");
      // After the answer has gone (respondWith's reaction runs first).
      setTimeout(function () {
        if (shown && request) { pushHistory(form, request); }
      }, 0);
    }));
  }, true);
})();
