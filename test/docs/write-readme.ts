// `npm run docs`: regenerates the README's generated sections in place.
import { readFileSync, writeFileSync } from 'node:fs';
import { README, render } from './readme.js';

writeFileSync(README, render(readFileSync(README, 'utf8')));
