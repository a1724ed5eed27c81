/*
 * door.js: the door page's camera, and its word when the connection fails. The page works
 * without it: a typed code is a plain form's POST.
 *
 * - Scan: the "Scan the QR code" button (shown only where the browser can open a camera)
 *   opens the back camera (getUserMedia) and reads each frame for a QR code: with the
 *   browser's BarcodeDetector where it reads QR codes, otherwise with the vendored jsQR
 *   (static/js/jsqr-<version>.js, loaded only then). The first code read fills the code field
 *   and submits the door's form, exactly as a press of "Check in" would; the camera stops.
 * - A check-in whose request got no answer (htmx:error: the network, not the site, failed)
 *   is said aloud, with what to do: press again. The code stays in its field. Pressing again
 *   is safe: the server checks a registration in once and answers "already checked in" to the
 *   second, so a lost answer never turns into a silent double check-in. While a request runs,
 *   htmx disables the form's button (hx-disable), so one press sends one request.
 *
 * Nothing here is the agent bridge, and the page carries no tool.
 */
(function () {
  "use strict";

  var scanner = document.querySelector(".door-scanner");
  var connection = document.getElementById("door-connection");
  if (!scanner) { return; }
  var scanButton = document.getElementById("door-scan");
  var camera = document.getElementById("door-camera");
  var video = document.getElementById("door-video");
  var stopButton = document.getElementById("door-scan-stop");
  var line = document.getElementById("door-scan-status");
  var stream = null;
  var reading = false;

  function form() { return document.getElementById("check_in"); }
  function codeField() { return document.getElementById("check_in-code"); }
  function say(key) { line.textContent = key ? scanner.getAttribute("data-" + key) : ""; }

  /* What reads a QR code from the video: a function giving a promise of its text (or null). */
  function detectorReader() {
    var detector = new window.BarcodeDetector({ formats: ["qr_code"] });
    return function () {
      return detector.detect(video).then(function (codes) {
        return codes.length ? codes[0].rawValue : null;
      });
    };
  }

  var jsQRLoaded = null;
  function loadJsQR() {
    if (!jsQRLoaded) {
      jsQRLoaded = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = scanner.getAttribute("data-jsqr");
        script.onload = function () { resolve(window.jsQR); };
        script.onerror = reject;
        document.head.appendChild(script);
      });
    }
    return jsQRLoaded;
  }

  function jsQRReader(jsQR) {
    var canvas = document.createElement("canvas");
    var context = canvas.getContext("2d", { willReadFrequently: true });
    return function () {
      var width = video.videoWidth, height = video.videoHeight;
      if (!width || !height) { return Promise.resolve(null); }
      canvas.width = width;
      canvas.height = height;
      context.drawImage(video, 0, 0, width, height);
      var found = jsQR(context.getImageData(0, 0, width, height).data, width, height,
        { inversionAttempts: "dontInvert" });
      return Promise.resolve(found ? found.data : null);
    };
  }

  function reader() {
    if ("BarcodeDetector" in window) {
      return window.BarcodeDetector.getSupportedFormats().then(function (formats) {
        return formats.indexOf("qr_code") >= 0 ? detectorReader() : loadJsQR().then(jsQRReader);
      });
    }
    return loadJsQR().then(jsQRReader);
  }

  function stop() {
    reading = false;
    if (stream) { stream.getTracks().forEach(function (track) { track.stop(); }); }
    stream = null;
    video.srcObject = null;
    camera.hidden = true;
    scanButton.hidden = false;
  }

  function read(readFrame) {
    if (!reading) { return; }
    readFrame().then(function (text) {
      if (!reading) { return; }
      if (text) {
        stop();
        say("");
        var field = codeField();
        field.value = text;
        field.focus();
        form().requestSubmit();
        return;
      }
      window.setTimeout(function () { read(readFrame); }, 150);
    }, function () { window.setTimeout(function () { read(readFrame); }, 150); });
  }

  function start() {
    reader().then(function (readFrame) {
      return navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" }, audio: false })
        .then(function (opened) {
          stream = opened;
          video.srcObject = stream;
          camera.hidden = false;
          scanButton.hidden = true;
          say("looking");
          reading = true;
          return video.play().then(function () { read(readFrame); });
        }, function () { say("denied"); });
    }, function () { say("unsupported"); });
  }

  if (navigator.mediaDevices && navigator.mediaDevices.getUserMedia) {
    scanButton.hidden = false;
    scanButton.addEventListener("click", start);
    stopButton.addEventListener("click", function () { stop(); say(""); codeField().focus(); });
  }

  function fromDoorForm(event) {
    var source = event.detail && event.detail.ctx && event.detail.ctx.sourceElement;
    return !!(source && source.closest && source.closest("#check_in"));
  }

  document.addEventListener("htmx:before:request", function (event) {
    if (fromDoorForm(event)) { connection.hidden = true; connection.textContent = ""; }
  });

  document.addEventListener("htmx:error", function (event) {
    if (!fromDoorForm(event)) { return; }
    connection.textContent = connection.getAttribute("data-failed");
    connection.hidden = false;
    var field = codeField();
    if (field) { field.focus(); }
  });
})();
