import { probe } from './probe.js';

window.__result = probe();
