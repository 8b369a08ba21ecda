import { defineConfig } from "niceeval";

// One local sandbox at a time (the local provider is exclusive); each Attempt gets its own copy
// of workspace/ in a private temp directory, never this checkout.
export default defineConfig({ timeoutMs: 60_000 });
