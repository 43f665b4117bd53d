'use client';
// a client component: the package runs in the browser
import { useEffect } from 'react';
import { probe } from '../../src/probe.js';

export default function Probe() {
  useEffect(() => {
    window.__result = probe();
  }, []);
  return <p>client</p>;
}
