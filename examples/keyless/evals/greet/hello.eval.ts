import { defineEval } from "niceeval";
import { pattern } from "niceeval/expect";

export default defineEval({
  description: "greeting round-trip",
  tags: ["smoke"],
  async test(t) {
    const turn = await t.send("Say hello");
    await turn.succeeded().orStop();
    t.check(turn.message, pattern(/hello/i)).label("greets");
  },
});
