/**
 * Records, in every golden-corpus case (fixtures/results/*.json), the envelope each output format
 * renders (`envelopes.results`, `envelopes.result`, `envelopes.response`).
 *
 * Run it after a deliberate change to the renderer or the normalizer, then READ the diff: it is
 * the change every upstream client will see. test/upstream/golden-envelopes.test.ts fails until
 * the recorded envelopes match the code again.
 *
 *   npx tsx scripts/record-envelopes.ts
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORPUS_DIR, readCorpus, renderEnvelopes } from '../test/helpers/golden.js';

let changed = 0;
for (const entry of readCorpus()) {
  const envelopes = renderEnvelopes(entry);
  const before = JSON.stringify(entry.data.envelopes);
  if (before === JSON.stringify(envelopes)) continue;
  writeFileSync(join(CORPUS_DIR, entry.file), `${JSON.stringify({ ...entry.data, envelopes }, null, 2)}\n`);
  changed++;
}
process.stderr.write(`recorded envelopes: ${changed} case(s) changed\n`);
