import assert from "node:assert/strict";
import { decodeData, renderHtml } from "../../src/report/view/html.ts";
import { CLIENT_SCRIPT } from "../../src/report/view/_client.ts";
import { fakeViewModel } from "../_fakes/view_model.ts";

const DATA_BLOCK =
  /<script type="application\/octet-stream" data-encoding="gzip\+base64" id="niceeval-data">([\s\S]*?)<\/script>/;

/** The page's data block as written: base64 text. */
function rawBlock(html: string): string {
  const match = DATA_BLOCK.exec(html);
  assert.ok(match, "the page has a niceeval-data block");
  return match[1]!;
}

/** The JSON text of the page's data block, as the page inflates it. */
function dataBlock(html: string): string {
  return decodeData(rawBlock(html));
}

/** The inline page script (the one without a type). */
function pageScript(html: string): string {
  const match = /<script>([\s\S]*?)<\/script>/.exec(html);
  assert.ok(match, "the page has an inline script");
  return match[1]!;
}

Deno.test("the data block survives </script>, <!-- and U+2028/U+2029 in the model", () => {
  const model = fakeViewModel({ experiments: 2, evals: 6, hostileText: true });
  const json = JSON.stringify(model);
  assert.ok(json.includes("</script>") && json.includes("\u2028") && json.includes("\u2029"));
  const html = renderHtml(json, "demo");
  const block = rawBlock(html);
  assert.match(block, /^[A-Za-z0-9+/]+=*$/, "only base64 inside the block");
  assert.deepEqual(JSON.parse(dataBlock(html)), model);
  // The block ends where the renderer ended it: the page script follows right after.
  assert.ok(html.indexOf(CLIENT_SCRIPT) > html.indexOf(block) + block.length);
});

Deno.test("the title is HTML-escaped wherever it appears", () => {
  const title = `<img src=x onerror="alert(1)"> & 'quotes'`;
  const html = renderHtml("{}", title);
  assert.ok(!html.includes("<img"));
  assert.ok(html.includes("&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; &#39;quotes&#39;"));
  assert.match(html, /<title>&lt;img[^<]*<\/title>/);
});

Deno.test("the page is a complete document that references nothing outside itself", () => {
  const html = renderHtml(JSON.stringify(fakeViewModel({ experiments: 2, evals: 5 })), "demo");
  assert.match(html, /^<!doctype html>\n<html lang="en">/);
  assert.match(html, /<meta charset="utf-8">/);
  assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  assert.match(html, /<nav aria-label="Report">/);
  assert.match(html, /<main id="page"/);
  assert.match(html, /Content-Security-Policy" content="default-src 'none';/);
  const refs = [...html.matchAll(/\b(?:src|href)\s*=\s*["']?([^"'\s>]*)/gi)].map((m) => m[1]!);
  for (const ref of refs) {
    assert.ok(!/^(?:[a-z][a-z0-9+.-]*:|\/\/)/i.test(ref), `no external reference: ${ref}`);
  }
  assert.ok(!/https?:\/\//i.test(html), "no http(s) URL anywhere in the page");
  assert.ok(!/<link\b/i.test(html) && !/@import|url\(/i.test(html), "no stylesheet or url() load");
  assert.ok(!/\bfetch\(|XMLHttpRequest|WebSocket|EventSource/.test(CLIENT_SCRIPT));
});

Deno.test("the page script is valid script text that cannot end its own element", () => {
  const html = renderHtml("{}", "demo");
  const script = pageScript(html);
  assert.equal(script, CLIENT_SCRIPT);
  assert.ok(script.startsWith('"use strict";'));
  assert.ok(!/<\/script|<!--/i.test(script));
  assert.doesNotThrow(() => new Function(script));
  // Syntax errors are caught: the same check rejects a broken script.
  assert.throws(() => new Function(script.slice(0, -20)), SyntaxError);
  const markup = [...script.matchAll(/innerHTML\s*=\s*([^;]*);/g)].map((m) => m[1]);
  assert.deepEqual(markup, ['"<svg></svg>"'], "innerHTML only gets constant markup");
});

Deno.test("a 10,000-Attempt report renders to less than 15 MB, its data compressed", () => {
  const model = fakeViewModel({ experiments: 4, evals: 2560, attemptsPerEval: 1 });
  assert.ok(model.attempts.length >= 10_000, `${model.attempts.length} Attempts`);
  const json = JSON.stringify(model);
  const html = renderHtml(json, "big");
  assert.ok(html.length < 15_000_000, `${html.length} characters`);
  const block = rawBlock(html);
  assert.ok(block.length * 4 < json.length, `${block.length} of ${json.length}: compressed`);
  assert.ok(html.length - block.length < 200_000, "the page adds little around the data");
  assert.equal(dataBlock(html), json);
});
