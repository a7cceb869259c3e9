// Test helper process (watch-stall.test.ts): swaps `swap/` for a symlink to
// `target/` and back as fast as it can for argv[3] ms, then reports the count.
import { renameSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

const [root, ms] = process.argv.slice(2);
const folder = join(root, 'swap');
const parked = join(root, 'swap.parked');
const until = Date.now() + Number(ms);
let swaps = 0;
while (Date.now() < until) {
  renameSync(folder, parked);
  symlinkSync(join(root, 'target'), folder);
  unlinkSync(folder);
  renameSync(parked, folder);
  swaps += 1;
}
process.send({ swaps }, () => process.exit(0));
