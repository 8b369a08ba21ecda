import { defineConfig } from "niceeval";

// Each Attempt runs in its own container (network "none", user "sandbox"); at most four
// containers of this user exist on the machine at once, whatever else is running.
export default defineConfig({ timeoutMs: 60_000, maxSandboxes: { docker: 4 } });
