//# allFunctionsCalledOnLoad
/*
 * webmcp-bridge.js: answers WebMCP agents from htmx forms without leaving the page.
 *
 * A WebMCP browser turns every <form toolname> into an agent tool. When an agent submits one,
 * the `submit` event has `agentInvoked === true`, and the page may answer the call itself with
 * `event.respondWith()` (after `preventDefault()`), instead of letting the form navigate.
 *
 * htmx would otherwise cancel that submit and swap the response without answering the agent,
 * which makes the tool call fail. So the submit listener at the end of this file runs first
 * (capture phase, on document) and hands the call to `answer`, which sends the same request
 * htmx would send (`requestFor`: marked as an agent's, for the activity log), swaps the partial
 * where htmx would put it (`show`), and answers with the JSON-LD result the partial starts with
 * (`readResult`). When the swap added, removed or changed a tool form, the answer waits until
 * Chromium has registered the page's tool forms as they now are (`toolsRegistered`): an answer
 * never names a tool (or an id among a tool's choices) the page does not offer yet. The history
 * entry the swap would push (hx-push-url) follows the answer (`pushHistory`). When the site
 * cannot be reached, the agent still gets an answer, in the page's language (`unreachable`).
 *
 * The invoked form must stay in the page until the call is answered: Chromium cancels a call
 * whose form is removed or replaced ("Tool execution cancelled, since tool definition was
 * updated"). So a swap may morph a target that holds the form, never replace it; failures the
 * server routes elsewhere (`HX-Retarget`, `HX-Reswap`: the error slot beside the form) go
 * there, as htmx would put them (`placement`); and a swap that would still remove the form is
 * not made (`wouldRemove`: the agent is answered all the same, and the console says why).
 *
 * An agent's fill must not also set off htmx's conveniences for people (active search, showing
 * the chosen event). Telling an agent's fill from a person's takes a workaround for how
 * Chromium fills a tool form, kept whole in `holdFillsUntilWeKnowWhoMadeThem` (its comment says
 * what it works around). The form is sent as Chromium filled it: Chromium fills only the
 * controls whose value the call changes and gives no sign of a value given again unchanged, so
 * the bridge cannot tell the conditions a call left out from those it repeated, and leaves them
 * all as they are.
 *
 * An agent's first call should not wait for code to be compiled either. The first line asks V8
 * to compile every function of this file as it loads (an explicit compile hint: it must be
 * the file's first line), where it would otherwise compile each on the main thread the first
 * time it runs: during the first call, as the agent waits (4-5 ms of it on the search page, in
 * a DevTools trace). All of it runs for that call. htmx is vendored as released, so once the
 * page is idle after loading, `warmUp` runs htmx's swaps on a detached element and lists the
 * tools, for the same reason.
 *
 * Without JavaScript none of this runs: forms navigate, and the JSON-LD of the page they land
 * on is the agent's answer. People's submits are left to htmx untouched.
 */
(() => {
  "use strict";

  const AGENT_HEADER = "WebMCP-Agent-Invoked";
  const TOOL_FORMS = "form[toolname][tooldescription]";
  // A control outside its form, tied to it by form="id", belongs to that form's tool too.
  const TOOL_PARTS = `${TOOL_FORMS}, [form]`;
  // How a partial starts (webmcp/partial.html): its result, then what people see.
  const RESULT_START = '<script type="application/ld+json">';
  const RESULT_END = "</script>";
  // Attributes of how the page shows, never of what a tool is: htmx marks what it swaps with
  // classes, and the bridge takes the [autofocus] of what it swaps in (see `swapLikeHtmx`).
  const PRESENTATION = ["class", "style", "autofocus"];
  // htmx swap styles that put new nodes in place of the target, or of its content.
  const REPLACING_SWAPS = ["innerHTML", "outerHTML", "textContent", "delete"];
  // An answer waits for the tools its swap brought, but not forever (a form Chromium refuses).
  const REGISTRATION_WAIT_MS = 2000;

  /* An htmx attribute, written either way: hx-foo or data-hx-foo. */
  const attr = (element, name) =>
    element.getAttribute(name) || element.getAttribute(`data-${name}`);

  const isToolForm = (form) => form instanceof HTMLFormElement && form.hasAttribute("toolname");

  /* The method and URL htmx would use for this form, with the fields of a GET in the query. */
  function requestFor(form, submitter) {
    let method = "get";
    let action = form.getAttribute("action") || location.href;
    for (const verb of ["get", "post"]) {
      const url = attr(form, `hx-${verb}`);
      if (url !== null) {
        method = verb;
        action = url || action;
      }
    }
    const body = new FormData(form, submitter || undefined);
    const url = new URL(action, location.href);
    const init = {
      method: method.toUpperCase(),
      credentials: "same-origin",
      headers: {
        "HX-Request": "true",
        "HX-Request-Type": "partial",
        "Accept": "text/html",
        [AGENT_HEADER]: "true",
      },
    };
    if (method === "get") {
      // A blank field means "not given" to the server: leaving it out keeps the address (and
      // the history entry it becomes) clean, as people.js does for htmx's requests.
      for (const [key, value] of body) {
        if (value !== "") {
          url.searchParams.append(key, value);
        }
      }
    } else {
      init.body = new URLSearchParams(body);
    }
    return { url, init };
  }

  /* The result the partial embeds for agents: the JSON-LD block it starts with, read without
     parsing the rest (htmx parses that once, to swap it). */
  function readResult(html) {
    const start = html.indexOf(RESULT_START);
    const end = start === -1 ? -1 : html.indexOf(RESULT_END, start);
    if (end === -1) {
      throw new Error("The page answered without a result.");
    }
    return JSON.parse(html.slice(start + RESULT_START.length, end));
  }

  /* Where the answer goes: where the server sent it (HX-Retarget/HX-Reswap: a failure goes to
     the error slot beside the form), else the form's hx-target and hx-swap, as in htmx. */
  function placement(form, response) {
    const selector = response.headers.get("HX-Retarget") || attr(form, "hx-target");
    return {
      target: selector ? document.querySelector(selector) : form,
      swap: response.headers.get("HX-Reswap") || attr(form, "hx-swap") || "innerHTML",
    };
  }

  /* Whether swapping there would take the invoked form out of the page (a morph keeps it). */
  function wouldRemove(place, form) {
    const style = place.swap.split(" ")[0];
    return REPLACING_SWAPS.includes(style) && place.target.contains(form);
  }

  /* Whether a DOM change touched a tool's form or its controls (the tool may have changed).
     A change of presentation is not one: htmx marks even an unchanged error message in a form
     with its swap's classes (htmx-swapping, htmx-settling), and waiting for Chromium's tools
     after such a swap made the agent wait for a layout of the page (`getTools()` lays it out). */
  function touchesTools(record) {
    const { target } = record;
    if (record.type === "attributes" && PRESENTATION.includes(record.attributeName)) {
      return false;
    }
    const element = target.nodeType === Node.ELEMENT_NODE ? target : target.parentElement;
    if (element?.closest(TOOL_PARTS)) {
      return true;
    }
    return [...record.addedNodes, ...record.removedNodes].some((node) =>
      node.nodeType === Node.ELEMENT_NODE
      && (node.matches(TOOL_PARTS) || node.querySelector(TOOL_PARTS) !== null));
  }

  /* Swap the partial with htmx's own swap (out-of-band parts included); resolves with whether
     the swap touched a tool form, and the element that asks for the focus ([autofocus]), to
     be focused once the agent has its answer: htmx would focus it within the swap, and
     focusing lays the page out at once, on the agent's time. The history entry comes later
     too (see `pushHistory`). */
  async function swapLikeHtmx(form, place, html) {
    let toolsTouched = false;
    let focusLater = null;
    const note = (records) => {
      toolsTouched ||= records.some(touchesTools);
    };
    // htmx focuses the first [autofocus] of each part it swapped in, right after this event.
    const holdFocus = (event) => {
      for (const node of event.detail?.newContent ?? []) {
        if (node.nodeType !== Node.ELEMENT_NODE) {
          continue;
        }
        const asking = [...(node.matches("[autofocus]") ? [node] : []),
                        ...node.querySelectorAll("[autofocus]")];
        focusLater = asking[0] ?? focusLater;
        asking.forEach((element) => element.removeAttribute("autofocus"));
      }
    };
    const watcher = new MutationObserver(note);
    watcher.observe(document.body,
                    { subtree: true, childList: true, attributes: true, characterData: true });
    document.addEventListener("htmx:after:settle", holdFocus, true);
    try {
      await window.htmx.swap({ sourceElement: form, target: place.target, swap: place.swap,
                               text: html });
      note(watcher.takeRecords());
      return { toolsTouched, focusLater };
    } finally {
      document.removeEventListener("htmx:after:settle", holdFocus, true);
      watcher.disconnect();
    }
  }

  /* The values each choice of a form offers (radio groups and selects), by control name. */
  function choicesOf(form) {
    const choices = {};
    const offer = (name, value) => {
      (choices[name] ??= []).push(value);
    };
    for (const control of form.elements) {
      if (!control.name || control.disabled) {
        continue;
      }
      if (control.type === "radio") {
        offer(control.name, control.value);
      } else if (control.tagName === "SELECT") {
        for (const option of control.options) {
          if (!option.disabled) {
            offer(control.name, option.value);
          }
        }
      }
    }
    return choices;
  }

  const sameValues = (a, b) => {
    const distinct = (values) => [...new Set(values)].sort().join("\n");
    return distinct(a) === distinct(b);
  };

  /* Whether Chromium's tools are the page's tool forms as they are now: every form has its
     tool, and each choice the tool offers is the form's (the ids an answer may name). */
  function registered(tools) {
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    return [...document.querySelectorAll(TOOL_FORMS)].every((form) => {
      const tool = byName.get(form.getAttribute("toolname"));
      if (!tool) {
        return false;
      }
      const properties = tool.inputSchema?.properties || {};
      return Object.entries(choicesOf(form)).every(([name, values]) => {
        const property = properties[name] || {};
        const offered = property.enum || property.items?.enum;
        return !offered || sameValues(offered, values);
      });
    });
  }

  /* Resolves once Chromium has registered the page's tool forms as they are now: it does so a
     moment after a form changes, and then fires `toolchange`. */
  function toolsRegistered() {
    const { modelContext } = document;
    if (!modelContext) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const check = () => {
        modelContext.getTools().then((tools) => {
          if (registered(tools)) {
            done();
          }
        }, done);
      };
      const done = () => {
        clearTimeout(giveUp);
        modelContext.removeEventListener("toolchange", check);
        resolve();
      };
      const giveUp = setTimeout(done, REGISTRATION_WAIT_MS);
      modelContext.addEventListener("toolchange", check);
      check();
    });
  }

  /* Put the answer where `placement` says; resolves once the page offers what it describes,
     with the element to focus once the agent has its answer (or null). Rejects if it cannot
     (a target that is no valid selector, a swap that throws). */
  async function show(form, response, html) {
    const place = placement(form, response);
    if (!place.target || !window.htmx) {
      return null;
    }
    if (wouldRemove(place, form)) {
      const target = attr(form, "hx-target") || "the form";
      console.warn(`WebMCP bridge: not swapped: ${place.swap} of ${target} would remove the `
                   + "invoked form and cancel the call.");
      return null;
    }
    const { toolsTouched, focusLater } = await swapLikeHtmx(form, place, html);
    if (toolsTouched) {
      await toolsRegistered();
    }
    return focusLater;
  }

  /* The history entry htmx would have pushed with the swap (hx-push-url), pushed by htmx once
     the agent has its answer: Chromium takes several milliseconds over a same-document
     navigation (and the favicon it then reloads), which the agent need not wait for. */
  function pushHistory(form, request) {
    const push = attr(form, "hx-push-url");
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

  /* The envelope an agent gets when the site could not be reached at all. Its sentences are
     the page's own (data-unreachable-* on <body>, from the site's message catalog), so they
     are in the page's language; English only if the page has none. */
  function unreachable(form) {
    const page = document.body.dataset;
    return {
      action: form.getAttribute("toolname"),
      status: "internal_error",
      message: page.unreachableMessage || "The site could not be reached. Nothing was changed.",
      retryable: true,
      nextAction: page.unreachableNextAction
        || "Tell the user the site is unreachable; retry later, not at once.",
    };
  }

  /* The agent's answer to a submit of `form`: the result of the request htmx would send, once
     the page shows it; `unreachable` if there is none. The request is built in here, so that a
     failure to build it (a submitter the form no longer owns, say) is answered too. */
  async function answer(form, submitter) {
    let request = null;
    let shown = false;
    let focusLater = null;
    try {
      request = requestFor(form, submitter);
      const response = await fetch(request.url, request.init);
      const html = await response.text();
      const result = readResult(html);
      // The page first shows what the answer describes. From here on the site has answered
      // (a POST has done what it did): a page that cannot show the answer is no reason to
      // tell the agent otherwise, so a failure to place or swap it still answers the result.
      shown = await show(form, response, html).then((element) => {
        focusLater = element;
        return true;
      }, (error) => {
        console.warn("WebMCP bridge: the answer was not shown:", error);
        return false;
      });
      return result;
    } catch (error) {
      console.warn("WebMCP bridge:", error.message);
      return unreachable(form);
    } finally {
      form.removeAttribute("aria-busy");
      // After the answer has gone (respondWith's reaction runs first).
      setTimeout(() => {
        if (shown) {
          if (focusLater?.isConnected) {
            focusLater.focus();
          }
          pushHistory(form, request);
        }
      }, 0);
    }
  }

  /*
   * WORKAROUND for Chromium (WebMCP as of Chromium 156): Chromium fills a tool form for an
   * agent and submits it in the same task, and the `input` and `change` events of its fill are
   * trusted and look exactly like a person's: nothing on them says an agent made them. Passed
   * straight on, they set off htmx's conveniences for people (the search form's active search
   * on `input`, the result list's "show the chosen event" on `change`), which would send a
   * second request beside the agent's own, and a late one swaps the page (the preview pane)
   * under the agent's next call, which Chromium then cancels ("Tool execution cancelled, since
   * tool definition was updated").
   *
   * So each `input` or `change` on a tool form is held for one task: if an agent's submit of
   * that form came in the meantime, the fill was the agent's and is dropped (the bridge's
   * request is the only one); otherwise a person made it, and a copy of each held event is
   * dispatched where it happened, once, for htmx and every other listener (the same event but
   * for `isTrusted`, which a copy cannot have).
   *
   * Once Chromium marks an agent's fill as such, replace this function and its one call with
   * a listener that drops the marked events. Should Chromium ever fill in a task of its own
   * before the submit, this can no longer tell the two apart: the browser tests of an agent's
   * fill (test_bridge.py) check each thing it protects, and would fail.
   */
  function holdFillsUntilWeKnowWhoMadeThem() {
    const heldFills = new WeakMap(); // form -> { events, byAgent }
    const passedOn = new WeakSet(); // the copies dispatched, which pass straight through

    const passOn = (event) => {
      const copy = new event.constructor(event.type, event);
      passedOn.add(copy);
      event.target.dispatchEvent(copy);
    };

    const hold = (event) => {
      const { form } = event.target;
      if (passedOn.has(event) || !isToolForm(form)) {
        return;
      }
      event.stopImmediatePropagation();
      let fill = heldFills.get(form);
      if (!fill) {
        fill = { events: [], byAgent: false };
        heldFills.set(form, fill);
        setTimeout(() => {
          heldFills.delete(form);
          if (!fill.byAgent) {
            fill.events.forEach(passOn);
          }
        }, 0);
      }
      fill.events.push(event);
    };

    document.addEventListener("input", hold, true);
    document.addEventListener("change", hold, true);
    // On document, like the bridge's listener below: its stopPropagation() (for htmx) leaves
    // the other listeners of document their turn.
    document.addEventListener("submit", (event) => {
      const fill = event.agentInvoked && heldFills.get(event.target);
      if (fill) {
        fill.byAgent = true; // the agent's own fill: the bridge's request is the only one
      }
    }, true);
  }

  holdFillsUntilWeKnowWhoMadeThem();

  /* Once the page is idle after loading, swap twice into a detached element and list the
     tools: an engine compiles a function when it first runs, and htmx's first swap (plus its
     marking of the history entry) would otherwise slow the agent's first call by tens of
     milliseconds. Nothing on the page changes. */
  async function warmUp() {
    if (!window.htmx) {
      return;
    }
    const scratch = document.createElement("div");
    const part = '<form hx-get="."><label>A <input name="a"></label></form>';
    try {
      await window.htmx.swap({ target: scratch, swap: "innerHTML", text: part });
      await window.htmx.swap({ target: scratch, swap: "innerMorph", text: part });
      await document.modelContext?.getTools();
    } catch {
      // Only a warm-up: the first call runs the same code regardless.
    }
  }

  requestIdleCallback(warmUp);

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!event.agentInvoked || !isToolForm(form)) {
      return;
    }
    if (!attr(form, "hx-get") && !attr(form, "hx-post")) {
      return; // a plain form: let it navigate; the next page's JSON-LD is the answer
    }
    event.preventDefault();
    event.stopPropagation(); // htmx must not send it a second time
    // Nothing may throw between preventDefault() and respondWith(): the browser would end the
    // call as the site's programming error, unanswered. So all that can fail is in `answer`,
    // which answers every failure (and, being async, cannot throw here).
    form.setAttribute("aria-busy", "true");
    event.respondWith(answer(form, event.submitter));
  }, true);
})();
