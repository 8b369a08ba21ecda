/**
 * The `niceeval view` page (issue 17, item 1): one self-contained HTML document that embeds the
 * ViewModel as JSON and renders it with an inline script. The page loads nothing: its Content
 * Security Policy allows no request of any kind.
 */
import { Buffer } from "node:buffer";
import { gunzipSync, gzipSync } from "node:zlib";
import { CLIENT_SCRIPT } from "./_client.ts";
import { STYLE } from "./_style.ts";

/** Fast compression: level 6 would make the file about 10% smaller and take twice as long. */
const GZIP_LEVEL = 1;

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
const HTML_UNSAFE = /[&<>"']/g;

/** No network, no plugins, no frames: only the inline style and script run. */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; " +
  "img-src data:; base-uri 'none'; form-action 'none'";

/** Text escaped for HTML content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(HTML_UNSAFE, (c) => HTML_ESCAPES[c]!);
}

/**
 * The model's JSON as the data block holds it: gzip-compressed (a report of many Attempts repeats
 * the same keys and values over and over, and shrinks about tenfold) and base64-encoded, which
 * holds no character that could end the block. The page inflates it with the browser's own
 * DecompressionStream.
 */
export function encodeData(modelJson: string): string {
  return Buffer.from(gzipSync(modelJson, { level: GZIP_LEVEL })).toString("base64");
}

/** The inverse of {@link encodeData}: the model's JSON from a data block (tests, tools). */
export function decodeData(block: string): string {
  return gunzipSync(Buffer.from(block, "base64")).toString("utf8");
}

/**
 * The whole report page.
 *
 * @param modelJson The ViewModel, already serialized and redacted by the caller.
 * @param title The project's name, shown in the header and the window title.
 */
export function renderHtml(modelJson: string, title: string): string {
  const safeTitle = escapeHtml(title);
  return [
    "<!doctype html>\n",
    '<html lang="en">\n<head>\n<meta charset="utf-8">\n',
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">\n`,
    '<meta name="color-scheme" content="light dark">\n',
    '<meta name="generator" content="niceeval view">\n',
    `<title>${safeTitle} · niceeval view</title>\n`,
    `<style>${STYLE}</style>\n</head>\n<body>\n`,
    '<header class="top"><p class="brand"><span class="logo" aria-hidden="true">◆</span> niceeval',
    `<span class="proj">${safeTitle}</span></p><nav aria-label="Report"></nav></header>\n`,
    '<main id="page" tabindex="-1" data-page="overview"><p class="meta">Loading the report…</p></main>\n',
    "<noscript><p>This report needs JavaScript to show its data.</p></noscript>\n",
    '<script type="application/octet-stream" data-encoding="gzip+base64" id="niceeval-data">',
    encodeData(modelJson),
    "</script>\n<script>",
    CLIENT_SCRIPT,
    "</script>\n</body>\n</html>\n",
  ].join("");
}
