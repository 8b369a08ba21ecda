/**
 * The script of the `niceeval view` page: plain browser JavaScript (no modules, no network) that
 * reads the embedded ViewModel and renders the hash-routed pages of the report. It is kept as one
 * string because the page inlines it as it is; the parts below are joined in order and share one
 * function scope. Every value from the model reaches the DOM through `textContent` or
 * `setAttribute`, never through markup.
 */
import { CORE } from "./_client_core.ts";
import { CHARTS } from "./_client_charts.ts";
import { PAGES } from "./_client_pages.ts";
import { MATRIX } from "./_client_matrix.ts";
import { ATTEMPT } from "./_client_attempt.ts";
import { ROUTER } from "./_client_router.ts";

/** The page script: plain ES2020 in one function scope, run once when the page loads. */
export const CLIENT_SCRIPT: string =
  `"use strict";\n(function () {${CORE}${CHARTS}${PAGES}${MATRIX}${ATTEMPT}${ROUTER}})();\n`;
