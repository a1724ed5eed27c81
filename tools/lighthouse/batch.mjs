// Lighthouse over several pages with one Chromium: `node batch.mjs runs.json`, where runs.json
// is a list of {url, formFactor ("mobile" or "desktop"), categories, headers, quick, output}.
// Each report's JSON is written to its `output`; a page Lighthouse cannot load leaves its
// `runtimeError` in the report, for the caller to name.
//
// One `lighthouse` command per page starts Node and a Chromium each time; here the pages are
// audited one after another in the same browser (a fresh tab and cleared storage per run, as
// Lighthouse does). A `quick` run leaves out what only the performance category needs.

import { readFile, writeFile } from "node:fs/promises";

import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";
import desktopConfig from "lighthouse/core/config/desktop-config.js";

// As root Chromium runs only without its sandbox, as in the browser tests.
const CHROME_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu"];

// No screenshots, and no waiting for a quiet network and CPU after the load event: the pages
// are rendered on the server and their scripts are deferred, so accessibility, best practices
// and SEO read the same DOM; performance (timing) needs the waits.
const QUICK = {
  disableFullPageScreenshot: true,
  pauseAfterFcpMs: 0,
  pauseAfterLoadMs: 0,
  networkQuietThresholdMs: 0,
  cpuQuietThresholdMs: 0,
};

function configFor(run) {
  const base = run.formFactor === "desktop" ? desktopConfig : { extends: "lighthouse:default" };
  return run.quick ? { ...base, settings: { ...base.settings, ...QUICK } } : base;
}

const runs = JSON.parse(await readFile(process.argv[2], "utf8"));
const chrome = await chromeLauncher.launch({ chromeFlags: CHROME_FLAGS });
try {
  for (const run of runs) {
    const flags = {
      port: chrome.port,
      output: "json",
      logLevel: "error",
      onlyCategories: run.categories,
      extraHeaders: run.headers ?? undefined,
    };
    const result = await lighthouse(run.url, flags, configFor(run));
    await writeFile(run.output, result.report);
  }
} finally {
  await chrome.kill();
}
