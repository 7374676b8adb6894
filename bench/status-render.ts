/**
 * Issue 31: how long the status page takes to show a gateway with 2,000 tools, in Debian's
 * headless Chromium (playwright-core): from navigation to the catalog's last row on screen, and
 * the size of `/status/data`. Ten servers of 200 tools each (fixtures/servers/many-tools.ts).
 *
 * Run: `npm run bench:status` (`--rounds R`, default 5). Prints one JSON line.
 */
import './scratch.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { config, httpServe, ROOT } from './gateway.js';
import { median } from './stats.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const ROUNDS = Number(values.rounds);
const CHROMIUM = '/usr/bin/chromium';
const MANY = join(ROOT, 'dist', 'fixtures', 'servers', 'many-tools.js');
if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);

const servers = Array.from(
  { length: 10 },
  (_, i) =>
    `  m${i}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(MANY)}, "--tools=200"]\n    protocol: legacy\n`,
).join('');
const gateway = await httpServe(config(`servers:\n${servers}`));
const base = gateway.url.replace(/\/mcp$/, '');
const bytes = (await (await fetch(`${base}/status/data`)).text()).length;
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
});
const times: number[] = [];
let rows = 0;
for (let round = 0; round < ROUNDS; round++) {
  const page = await browser.newPage();
  const start = performance.now();
  await page.goto(`${base}/status`);
  // The page shows the first 500 catalog rows (the filter narrows the rest).
  await page.waitForFunction(
    () =>
      (
        globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }
      ).document.querySelectorAll('#tools tbody tr').length >= 500,
    undefined,
    { polling: 'raf', timeout: 30_000 },
  );
  times.push(performance.now() - start);
  rows = await page.locator('#tools tbody tr').count();
  await page.close();
}
await browser.close();
gateway.child.kill('SIGTERM');
console.log(
  JSON.stringify({
    part: 'status page, 2,000 tools: navigation to the catalog on screen',
    rounds: ROUNDS,
    first_render_ms_median: Math.round(median(times)),
    first_render_ms_each: times.map((t) => Math.round(t)),
    catalog_rows_shown: rows,
    data_bytes: bytes,
  }),
);
