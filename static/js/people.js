/*
 * people.js: what a person needs from the page once htmx answers in place, which a page
 * that navigates gives for free. Without JavaScript none of it is needed: each answer is a
 * new page, its fields carry aria-invalid, and a dialog is part of that page. What htmx does
 * itself is declared on the forms, not here: a sending form's buttons are disabled
 * (hx-disable, which the tool_form macro writes) and the form carries htmx's htmx-request
 * class, which the stylesheet shows as a spinner on its button. No aria-busy is added for
 * people: it asks a screen reader to hold back the changes inside an element until they are
 * done, and nothing inside a form changes while it waits; the disabled button and the
 * search's status line are what is heard. (The WebMCP bridge marks an agent's form aria-busy.)
 *
 * - Field errors: the server refreshes each field's message out of band; the control it
 *   describes follows (aria-invalid), and after a person's submit the first bad field gets
 *   the focus, as on a page that came back with errors.
 * - Dialogs (`dialog[data-modal]`): shown with showModal(), so Tab stays inside, Esc closes
 *   (or submits the dialog's `form[data-dismiss]`, when its closing must reach the server),
 *   the page behind is inert; once closed or swapped away, the focus returns to what opened
 *   it.
 * - Announcements: a search says "Searching…" in its status line while it runs; the answer
 *   then puts its one-sentence summary there (out of band), never the whole list. htmx has
 *   no attribute for a status line's text (its indicator is a class), so it is set here.
 * - Clean addresses: a search leaves out the filters left blank (the server reads a blank as
 *   "not given"), so the address it pushes is ?query=python, not every empty filter.
 * - Paging starts the list at its top: the focus goes to its summary ("showing 11 to 20").
 * - Answers morphed into an element marked `data-reset-controls` (the search's results) leave
 *   its controls as the answer wrote them: a morph keeps the nodes, and with them whatever was
 *   typed or filled into them (the page control would ask the next search for this page).
 *
 * - Copying in one tap (`button[data-copy]`: an event's link, an agent's access token and
 *   configuration, a calendar address): the button copies the text of the element it names
 *   (a readonly field's value, a <pre>'s text) to the clipboard, and the status line it names
 *   (`data-status`, a live region) says so. It is hidden without JavaScript, where the text
 *   beside it is copied by hand; focusing that text (`[data-select-on-focus]`) selects all of
 *   it. A button that also says how to share (`data-share-sheet`, an event's link) opens the
 *   system's share sheet (Web Share) on a phone instead.
 *
 * Swaps are watched with a MutationObserver rather than htmx events, so the answers the
 * WebMCP bridge swaps for an agent are treated exactly like a person's.
 */
(function () {
  "use strict";

  var FIELD_ERRORS = ".field-error[id]";

  /* Each control described by a field error is invalid exactly while that error says something. */
  function syncInvalid(root) {
    root.querySelectorAll(FIELD_ERRORS).forEach(function (message) {
      var bad = message.textContent.trim() !== "";
      document.querySelectorAll('[aria-describedby~="' + message.id + '"]').forEach(function (control) {
        if (control.tagName === "FIELDSET") { return; }
        if (bad) { control.setAttribute("aria-invalid", "true"); }
        else { control.removeAttribute("aria-invalid"); }
      });
    });
  }

  function firstInvalid(form) {
    return form.querySelector('[aria-invalid="true"]') ||
      (form.id && document.querySelector('[form="' + form.id + '"][aria-invalid="true"]'));
  }

  // The last element outside any dialog that had the focus: where a closed dialog returns it.
  var focusedOutsideDialogs = null;
  document.addEventListener("focusin", function (event) {
    if (!event.target.closest("dialog")) { focusedOutsideDialogs = event.target; }
  });

  // The modal dialogs shown, each with how to give the focus back once it is gone.
  var shownDialogs = [];

  /* A dialog the server sends open becomes modal. On close the focus returns to what had it
     (the button that asked for the dialog), or, when that is gone or was the page itself (an
     agent asked), to the element its data-modal attribute names. A dialog whose closing the
     server must hear (form[data-dismiss]) is closed by that form's answer, which swaps it
     away: Esc submits the form, and the focus returns the same way once the dialog is gone
     (a removed dialog fires no close event). */
  function makeModal(dialog) {
    if (dialog.dataset.modalShown) { return; }
    dialog.dataset.modalShown = "true";
    // Not document.activeElement: htmx may already have focused the dialog's [autofocus].
    var opener = focusedOutsideDialogs;
    dialog.close();
    dialog.showModal();
    function giveFocusBack() {
      var back = opener && opener.isConnected && opener !== document.body ? opener
        : document.querySelector(dialog.getAttribute("data-modal"));
      if (back) { back.focus(); }
    }
    dialog.addEventListener("close", giveFocusBack);
    dialog.addEventListener("cancel", function (event) {
      var dismiss = dialog.querySelector("form[data-dismiss]");
      if (dismiss) {
        event.preventDefault();
        dismiss.requestSubmit();
      }
    });
    shownDialogs.push({ dialog: dialog, giveFocusBack: giveFocusBack });
  }

  /* A dialog swapped away took the focus with it, unless what replaced it took the focus
     (a notice with [autofocus]). */
  function forgetRemovedDialogs() {
    shownDialogs = shownDialogs.filter(function (shown) {
      if (shown.dialog.isConnected) { return true; }
      if (!document.activeElement || document.activeElement === document.body) {
        shown.giveFocusBack();
      }
      return false;
    });
  }

  function onChanges() {
    syncInvalid(document);
    forgetRemovedDialogs();
    document.querySelectorAll("dialog[data-modal][open]").forEach(makeModal);
    revealCopyButtons();
  }

  function formOf(event) {
    var source = event.detail && event.detail.ctx && event.detail.ctx.sourceElement;
    return source && source.closest ? source.closest("form") : null;
  }

  function status(form) {
    var id = form && form.getAttribute("data-status");
    return id ? document.getElementById(id) : null;
  }

  document.documentElement.classList.add("js");

  document.addEventListener("htmx:config:request", function (event) {
    var request = event.detail.ctx.request;
    if (request.method.toUpperCase() !== "GET" || !request.body) { return; }
    var blank = [];
    request.body.forEach(function (value, key) { if (value === "") { blank.push(key); } });
    blank.forEach(function (key) { request.body.delete(key); });
  });

  function afterPaging() {
    var summary = document.querySelector("#results .results-summary");
    if (summary) {
      summary.focus({ preventScroll: true });
      summary.closest("#results").scrollIntoView({ block: "start" });
    }
  }

  /* A control as the answer wrote it: its value, its checks, its choices. */
  function resetToAnswer(control) {
    if (control.type === "checkbox" || control.type === "radio") {
      control.checked = control.defaultChecked;
    } else if (control.tagName === "SELECT") {
      Array.prototype.forEach.call(control.options, function (option) {
        option.selected = option.defaultSelected;
      });
    } else if ("defaultValue" in control) {
      control.value = control.defaultValue;
    }
  }

  // htmx's own event, so the WebMCP bridge's swaps (htmx.swap) are met the same way.
  document.addEventListener("htmx:after:swap", function (event) {
    var target = event.detail.ctx && event.detail.ctx.target;
    if (target && target.matches && target.matches("[data-reset-controls]")) {
      target.querySelectorAll("input, select, textarea").forEach(resetToAnswer);
    }
  });

  document.addEventListener("htmx:before:request", function (event) {
    var line = status(formOf(event));
    if (line) { line.textContent = line.getAttribute("data-waiting"); }
  });

  document.addEventListener("htmx:finally:request", function (event) {
    var source = event.detail.ctx.sourceElement;
    if (source && source.closest && source.closest(".pager")) { afterPaging(); return; }
    var form = formOf(event);
    if (!form) { return; }
    syncInvalid(document);
    var bad = firstInvalid(form);
    // Only after a submit: active search must not pull the caret out of the box being typed in.
    if (bad && event.detail.ctx.sourceEvent && event.detail.ctx.sourceEvent.type === "submit") {
      bad.focus();
    }
  });

  /* A phone shares through its own sheet; a desktop browser's sheet (where it has one) is
     less use than the clipboard. Buttons are revealed again after each swap (a refresh of
     the event's details brings them back hidden); one listener on the document serves all. */
  var SHEET = window.matchMedia("(pointer: coarse)").matches && !!navigator.share;
  var CLIPBOARD = !!(navigator.clipboard && window.isSecureContext);

  function sharesThroughSheet(button) {
    return SHEET && button.hasAttribute("data-share-sheet");
  }

  function revealCopyButtons() {
    document.querySelectorAll("button[data-copy][hidden]").forEach(function (button) {
      if (sharesThroughSheet(button)) { button.textContent = button.getAttribute("data-share-sheet"); }
      else if (!CLIPBOARD) { return; }
      button.hidden = false;
    });
  }

  /* The text a copy button stands for: a field's value, else the element's own text. */
  function textToCopy(element) {
    return element.matches("input, textarea") ? element.value : element.textContent;
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-copy]");
    if (!button) { return; }
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) { return; }
    var text = textToCopy(source);
    if (sharesThroughSheet(button)) {
      navigator.share({ title: button.getAttribute("data-share-title"), url: text })
        .catch(function () { /* the person closed the sheet */ });
      return;
    }
    var line = document.getElementById(button.getAttribute("data-status"));
    navigator.clipboard.writeText(text).then(function () {
      if (line) { line.textContent = button.getAttribute("data-copied"); }
    });
  });

  /* Text to copy by hand is selected whole when it gets the focus, by keyboard or by a tap
     (a tap's mouseup would otherwise drop a selection made on focus). */
  function selectAll(event) {
    var box = event.target.closest && event.target.closest("[data-select-on-focus]");
    if (!box) { return; }
    if (typeof box.select === "function") { box.select(); }
    else { window.getSelection().selectAllChildren(box); }
  }
  document.addEventListener("focusin", selectAll);
  document.addEventListener("click", selectAll);

  function start() {
    onChanges();
    new MutationObserver(onChanges).observe(document.body, { childList: true, subtree: true, characterData: true });
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); }
  else { start(); }
})();
