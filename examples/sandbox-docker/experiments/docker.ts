import { defineExperiment } from "niceeval";
import { commandAgent } from "niceeval/adapter";
import { dockerSandbox } from "niceeval/sandbox";

// The same shell editor as examples/sandbox-local, inside containers of a small offline image:
// busybox with git and a "sandbox" user (uid 1000). Every Attempt gets a fresh container with a
// copy of workspace/ in /workspace; the container is removed when the Attempt ends.
export const editor = commandAgent({
  name: "shell-editor",
  command: ["sh", "tools/edit.sh", "{{input}}"],
});

export const template = dockerSandbox({
  image: "niceeval-test/busybox-git:local",
  pull: "never",
  user: "sandbox",
  fixture: "../workspace",
});

export default defineExperiment({
  description: "shell editor in docker containers",
  agent: editor,
  sandbox: template,
});
