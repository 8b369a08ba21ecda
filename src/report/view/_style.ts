/**
 * The stylesheet of the `niceeval view` page: system fonts only (the page loads nothing), a light
 * theme with a dark one under `prefers-color-scheme`, verdict colors that always sit next to the
 * verdict's word, and tables that scroll sideways inside `.scroll` on narrow screens.
 */
export const STYLE: string = `
:root {
  color-scheme: light dark;
  --bg: #f7f8fa; --panel: #ffffff; --fg: #1c2430; --muted: #5b6676; --line: #dfe3ea;
  --accent: #3b5bdb; --focus: #f59f00; --code-bg: #f0f2f6;
  --passed: #1e7d3a; --passed-bg: #e3f4e8;
  --failed: #c92a2a; --failed-bg: #fdecec;
  --errored: #b35c00; --errored-bg: #fff1df;
  --scored: #1c64b8; --scored-bg: #e4effc;
  --skipped: #5f6b7a; --skipped-bg: #eceff3;
  --mixed: #7b4bb3; --mixed-bg: #f1e9fb;
  --s0: #3b5bdb; --s1: #e8590c; --s2: #2b8a3e; --s3: #c2255c;
  --s4: #0c8599; --s5: #7048e8; --s6: #a07800; --s7: #495057;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #12151b; --panel: #1a1f27; --fg: #e4e8ef; --muted: #9aa5b5; --line: #2e3541;
    --accent: #8ca6ff; --focus: #ffc94d; --code-bg: #232a35;
    --passed: #6bd68b; --passed-bg: #173524;
    --failed: #ff8a8a; --failed-bg: #401c1f;
    --errored: #ffb257; --errored-bg: #3d2a12;
    --scored: #7db5ff; --scored-bg: #182e4a;
    --skipped: #a3adbb; --skipped-bg: #262c36;
    --mixed: #c9a6ff; --mixed-bg: #2f2342;
    --s0: #8ca6ff; --s1: #ff9c5b; --s2: #69db7c; --s3: #f783ac;
    --s4: #3bc9db; --s5: #b197fc; --s6: #ffd43b; --s7: #ced4da;
  }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.9em; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible {
  outline: 3px solid var(--focus); outline-offset: 2px; border-radius: 3px;
}
main:focus { outline: none; }
.top {
  display: flex; flex-wrap: wrap; align-items: center; gap: 8px 24px;
  padding: 10px 24px; background: var(--panel); border-bottom: 1px solid var(--line);
  position: sticky; top: 0; z-index: 5;
}
.brand { margin: 0; font-weight: 650; letter-spacing: 0.01em; }
.brand .logo { color: var(--accent); }
.brand .proj { color: var(--muted); font-weight: 500; margin-left: 6px; }
nav ul { display: flex; flex-wrap: wrap; gap: 4px; margin: 0; padding: 0; list-style: none; }
nav a { display: inline-block; padding: 4px 12px; border-radius: 999px; text-decoration: none; color: var(--fg); }
nav a:hover { background: var(--code-bg); }
nav a[aria-current="page"] { background: var(--accent); color: var(--panel); font-weight: 600; }
main { max-width: 1240px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 1.6rem; margin: 4px 0 8px; line-height: 1.25; }
h2 { font-size: 1.15rem; margin: 28px 0 10px; }
h3 { font-size: 1rem; margin: 0 0 6px; }
.meta { color: var(--muted); margin: 0 0 12px; }
.empty { color: var(--muted); font-style: italic; }
.notice { padding: 12px 16px; border-radius: 8px; background: var(--failed-bg); color: var(--fg); border: 1px solid var(--line); }
.back { margin: 0 0 8px; }
.scroll { overflow-x: auto; max-width: 100%; border: 1px solid var(--line); border-radius: 8px; background: var(--panel); }
table.data { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
table.data th, table.data td { padding: 7px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; white-space: nowrap; }
table.data thead th { font-size: 0.8rem; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); background: var(--panel); }
table.data tbody tr:last-child > * { border-bottom: none; }
table.data tbody tr:hover > * { background: color-mix(in srgb, var(--accent) 5%, transparent); }
table.data .num { text-align: right; }
table.data td.wrap { white-space: normal; min-width: 12rem; }
.sides { display: grid; grid-template-columns: repeat(auto-fit, minmax(260px, 1fr)); gap: 12px; margin: 8px 0 0; }
.side { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; }
.side p { margin: 0; overflow-wrap: anywhere; }
.side .side-label { font-size: 0.75rem; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); }
.side .side-exp { font-weight: 650; font-size: 1.05rem; }
td.rate { background-image: linear-gradient(90deg, var(--passed-bg) var(--p, 0%), transparent var(--p, 0%)); font-weight: 600; }
.badge, .state {
  display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 0.82em; font-weight: 600;
  white-space: nowrap; border: 1px solid currentColor;
}
.v-passed { color: var(--passed); background: var(--passed-bg); }
.v-failed { color: var(--failed); background: var(--failed-bg); }
.v-errored { color: var(--errored); background: var(--errored-bg); }
.v-scored { color: var(--scored); background: var(--scored-bg); }
.v-skipped, .v-none, .v-interrupted, .v-other { color: var(--skipped); background: var(--skipped-bg); }
.v-mixed { color: var(--mixed); background: var(--mixed-bg); }
.tag { display: inline-block; margin-left: 6px; padding: 0 6px; border-radius: 4px; font-size: 0.75em; color: var(--muted); background: var(--code-bg); white-space: nowrap; }
.problems { margin: 0; padding: 12px 16px 12px 32px; background: var(--errored-bg); border-radius: 8px; }
.problems code { font-weight: 600; }
.controls { display: flex; flex-wrap: wrap; gap: 10px 16px; align-items: end; margin: 8px 0 10px; }
.controls label { display: flex; flex-direction: column; gap: 2px; font-size: 0.8rem; color: var(--muted); }
.controls input, .controls select {
  font: inherit; font-size: 0.95rem; color: var(--fg); background: var(--panel);
  border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; min-width: 12rem;
}
table.matrix td.cell { text-align: center; padding: 4px 6px; border-left: 1px solid var(--line); }
table.matrix td.cell > a, table.matrix td.cell > span:not(.runs) { display: inline-block; padding: 2px 8px; border-radius: 5px; font-weight: 600; font-size: 0.85em; }
table.matrix td.cell > a { color: inherit; text-decoration: none; }
table.matrix td.cell > a:hover { text-decoration: underline; }
table.matrix td.v-absent { background: repeating-linear-gradient(135deg, transparent 0 6px, var(--code-bg) 6px 8px); }
table.matrix td.cell .runs { display: inline-flex; flex-wrap: nowrap; gap: 3px; margin-left: 6px; vertical-align: middle; }
.mini { display: inline-block; min-width: 1.8em; padding: 0 4px; border-radius: 4px; font-size: 0.78em; font-weight: 600; text-decoration: none; border: 1px solid currentColor; text-align: center; }
.mini.self { outline: 2px solid currentColor; }
table.matrix th.eval { position: sticky; left: 0; z-index: 1; background: var(--panel); max-width: 28rem; overflow: hidden; text-overflow: ellipsis; }
table.matrix td.cell { background-clip: padding-box; }
table.matrix td.v-passed, table.matrix td.v-failed, table.matrix td.v-errored, table.matrix td.v-scored,
table.matrix td.v-skipped, table.matrix td.v-none, table.matrix td.v-interrupted, table.matrix td.v-mixed { background-color: transparent; }
table.matrix td.v-passed > a, table.matrix td.v-passed > .tally { background: var(--passed-bg); }
table.matrix td.v-failed > a, table.matrix td.v-failed > .tally { background: var(--failed-bg); }
table.matrix td.v-errored > a, table.matrix td.v-errored > .tally { background: var(--errored-bg); }
table.matrix td.v-scored > a, table.matrix td.v-scored > .tally { background: var(--scored-bg); }
table.matrix td.v-mixed > .tally { background: var(--mixed-bg); }
table.matrix td.v-none > span:not(.runs), table.matrix td.v-skipped > a,
table.matrix td.v-interrupted > a, table.matrix td.v-skipped > .tally, table.matrix td.v-none > .tally,
table.matrix td.v-interrupted > .tally { background: var(--skipped-bg); }
button.sort { font: inherit; font-size: 0.8rem; text-transform: none; letter-spacing: 0; color: var(--fg); background: none; border: none; padding: 2px 4px; cursor: pointer; display: inline-flex; gap: 4px; align-items: center; font-weight: 600; }
button.sort .arrow { color: var(--muted); }
button.more { margin: 12px 0; font: inherit; padding: 6px 16px; border-radius: 6px; border: 1px solid var(--line); background: var(--panel); color: var(--fg); cursor: pointer; }
button.more:hover { border-color: var(--accent); }
.kv { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 8px 20px; margin: 10px 0 0; }
.kv > div { min-width: 0; }
.kv dt { font-size: 0.75rem; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); }
.kv dd { margin: 0; overflow-wrap: anywhere; }
.attempt-title { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; }
.attempt-title .badge { font-size: 0.9rem; }
.siblings { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 14px 0 0; }
pre {
  margin: 4px 0; padding: 8px 10px; background: var(--code-bg); border-radius: 6px;
  overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 28rem;
}
.error-box { border: 1px solid var(--errored); border-left-width: 4px; border-radius: 8px; padding: 8px 14px; background: var(--errored-bg); }
.error-box pre { background: var(--panel); }
.assertions { list-style: none; margin: 0; padding: 0; display: grid; gap: 8px; }
.assertion { background: var(--panel); border: 1px solid var(--line); border-left: 4px solid var(--line); border-radius: 8px; padding: 8px 12px; }
.assertion.st-passed { border-left-color: var(--passed); }
.assertion.st-failed { border-left-color: var(--failed); }
.assertion.st-errored { border-left-color: var(--errored); }
.a-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 6px; }
.a-head .label { font-weight: 600; }
.a-head .group, .a-head .matcher { color: var(--muted); }
.a-head .source { margin-left: auto; color: var(--muted); }
.assertion .kv { grid-template-columns: 1fr; gap: 4px; }
.turn { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; margin: 0 0 12px; }
.events { list-style: none; margin: 8px 0 0; padding: 0; display: grid; gap: 8px; }
.role { display: inline-block; font-size: 0.72rem; text-transform: uppercase; letter-spacing: 0.05em; color: var(--muted); font-weight: 700; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
.input, .msg, .event-error { padding: 6px 10px; border-radius: 6px; background: var(--code-bg); }
.msg.role-assistant { background: color-mix(in srgb, var(--accent) 8%, var(--panel)); }
.event-error { background: var(--failed-bg); }
.tool { border: 1px dashed var(--line); border-radius: 6px; padding: 6px 10px; }
.tool-head code { font-weight: 600; }
details summary { cursor: pointer; color: var(--muted); }
.thinking .text { color: var(--muted); font-style: italic; }
.logs { list-style: none; margin: 0; padding: 0; }
.logs li { display: grid; grid-template-columns: minmax(0, auto) minmax(0, 1fr); gap: 10px; align-items: start; }
.logs time { color: var(--muted); font-size: 0.85em; padding-top: 10px; white-space: nowrap; }
.diags { list-style: none; margin: 0; padding: 0; display: grid; gap: 6px; }
.counts { display: flex; flex-wrap: wrap; gap: 8px; list-style: none; padding: 0; margin: 16px 0; }
.counts li { padding: 8px 14px; border-radius: 8px; background: var(--panel); border: 1px solid var(--line); }
.counts li span { font-size: 1.3rem; font-weight: 700; margin-right: 2px; }
.st-regressed { color: var(--failed); }
.st-fixed { color: var(--passed); }
.st-still-failing { color: var(--errored); }
.st-still-passing, .st-new, .st-gone { color: var(--muted); }
.state.st-regressed { background: var(--failed-bg); }
.state.st-fixed { background: var(--passed-bg); }
.state.st-still-failing { background: var(--errored-bg); }
figure.chart { margin: 24px 0; padding: 14px 16px; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
figure.chart h2 { margin: 0 0 10px; font-size: 1.05rem; }
figure.chart svg { display: block; max-width: 100%; height: auto; overflow: visible; }
figure.chart figcaption { color: var(--muted); font-size: 0.9rem; margin-top: 8px; }
figure.chart .fallback { margin-top: 8px; }
figure.chart .fallback .scroll { margin-top: 6px; }
.pair h3 { font-size: 0.9rem; color: var(--muted); }
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 16px; }
svg text { fill: var(--fg); font-size: 12px; }
svg .tick { fill: var(--muted); font-size: 11px; }
svg .val { fill: var(--muted); }
svg .axis { stroke: var(--muted); stroke-width: 1; }
svg .grid { stroke: var(--line); stroke-width: 1; }
svg .bar rect { fill: var(--accent); }
svg .bar.pass rect { fill: var(--passed); }
svg .bar.cost rect { fill: var(--s1); }
svg rect.hist { fill: var(--accent); }
svg .series polyline { fill: none; stroke-width: 2; }
.s0 { --c: var(--s0); } .s1 { --c: var(--s1); } .s2 { --c: var(--s2); } .s3 { --c: var(--s3); }
.s4 { --c: var(--s4); } .s5 { --c: var(--s5); } .s6 { --c: var(--s6); } .s7 { --c: var(--s7); }
svg .series polyline { stroke: var(--c); }
svg .series circle { fill: var(--c); stroke: var(--panel); stroke-width: 1.5; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; list-style: none; padding: 0; margin: 8px 0 0; font-size: 0.9rem; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 3px; margin-right: 6px; vertical-align: -1px; background: var(--c); }
@media (max-width: 640px) {
  body { font-size: 14px; }
  .top { padding: 8px 12px; position: static; }
  main { padding: 14px 12px 40px; }
  h1 { font-size: 1.35rem; }
  .controls label, .controls input, .controls select { width: 100%; min-width: 0; }
  .controls label { flex: 1 1 100%; }
  table.data th, table.data td { padding: 6px 8px; }
  table.matrix th.eval { max-width: 11rem; }
  table.matrix th.eval .tag { display: none; }
  .a-head .source { margin-left: 0; flex-basis: 100%; }
  .logs li { grid-template-columns: 1fr; gap: 0; }
  .logs time { padding-top: 4px; }
  figure.chart { padding: 10px; }
}
@media (prefers-reduced-motion: reduce) { * { scroll-behavior: auto !important; } }
`;
