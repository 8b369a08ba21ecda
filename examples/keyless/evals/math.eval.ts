import { defineEval } from "niceeval";
import { includes } from "niceeval/expect";

export default ["hello there", "hello again"].map((prompt) =>
  defineEval({
    description: prompt,
    async test(t) {
      await t.send(prompt);
      t.check(t.reply, includes("Hello"));
    },
  })
);
