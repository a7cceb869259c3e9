// `node --import` this to run the saved base build (see base-build-resolve.mjs).
import { register } from 'node:module';

register(new URL('./base-build-resolve.mjs', import.meta.url).href, import.meta.url);
