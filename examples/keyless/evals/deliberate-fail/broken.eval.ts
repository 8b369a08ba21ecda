import { defineEval } from "niceeval";

export default defineEval({
  async test(t) {
    (await t.send("return a failed turn")).succeeded();
  },
});
