import { probe } from './probe.js';

console.log(JSON.stringify(probe()));
