// `npm run docs`: regenerates the generated sections of docs/ in place.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileUrl, GENERATED, render } from './generated.js';

for (const file of Object.keys(GENERATED)) writeFileSync(fileUrl(file), render(file, readFileSync(fileUrl(file), 'utf8')));
