// The dashboard's GPU map (dashboard.js draws the rest): one canvas for
// every node's GPUs, since 5,000 nodes x 8 GPUs are 40,000 cells, which as
// DOM elements would take seconds to lay out; one mousemove listener finds
// the cell under the pointer for its tooltip.
'use strict';

const FREE = '#e9edf1';
export const OUTSIDE = '#8d99a6';
// The corner mark of a node whose GPUs a DRA driver publishes.
export const DRA_MARK = '#00838f';

// What was drawn last: the boxes to find a cell in, and what they show.
const drawn = { layout: [], key: '', colors: new Map() };

// The colour of the ClusterQueue that admitted a holder.
export function colorOf(pod, colors) {
  if (!pod || !pod.clusterQueue) return OUTSIDE;
  return colors.get(pod.clusterQueue) || OUTSIDE;
}

// A MIG cell shows at most this many instances, as one A100/H100 holds.
const MIG_PER_CELL = 7;

// A node's cells: its whole GPUs, then its MIG instances by profile, up
// to MIG_PER_CELL slices a cell.
function cellsOf(node) {
  const cells = node.status.gpus.map((gpu) => ({ gpu }));
  for (const pool of node.status.mig) {
    for (let first = 0; first < pool.capacity; first += MIG_PER_CELL) {
      cells.push({ pool, first, count: Math.min(MIG_PER_CELL, pool.capacity - first) });
    }
  }
  return cells;
}

// Larger cells and names for a small cluster; 6 px cells, names on hover,
// for thousands of nodes.
function sizing(count) {
  if (count <= 64) return { cell: 22, gap: 3, pad: 5, label: 15, space: 8 };
  if (count <= 400) return { cell: 12, gap: 2, pad: 3, label: 12, space: 6 };
  return { cell: 6, gap: 1, pad: 2, label: 0, space: 3 };
}

function layoutMap(nodes, width) {
  const z = sizing(nodes.length);
  const boxes = [];
  let x = 0, y = 0, rowHeight = 0;
  for (const node of nodes) {
    const cells = cellsOf(node);
    const cols = Math.max(1, Math.min(8, cells.length));
    const rows = Math.max(1, Math.ceil(cells.length / 8));
    let w = 2 * z.pad + cols * z.cell + (cols - 1) * z.gap;
    if (z.label) w = Math.max(w, z.cell === 22 ? 120 : 70);
    const h = 2 * z.pad + z.label + rows * z.cell + (rows - 1) * z.gap;
    if (x > 0 && x + w > width) { x = 0; y += rowHeight + z.space; rowHeight = 0; }
    boxes.push({ node, cells, x, y, w, h, z });
    x += w + z.space;
    rowHeight = Math.max(rowHeight, h);
  }
  return { boxes, height: y + rowHeight };
}

function cellOrigin(box, i) {
  const z = box.z;
  return { x: box.x + z.pad + (i % 8) * (z.cell + z.gap),
    y: box.y + z.pad + z.label + Math.floor(i / 8) * (z.cell + z.gap) };
}

function hatchPattern(ctx) {
  const tile = document.createElement('canvas');
  tile.width = 6;
  tile.height = 6;
  const g = tile.getContext('2d');
  g.strokeStyle = '#b3261e';
  g.lineWidth = 1.5;
  g.beginPath();
  g.moveTo(0, 6);
  g.lineTo(6, 0);
  g.stroke();
  return ctx.createPattern(tile, 'repeat');
}

// A whole GPU: its holders side by side by their milli-GPU (shares and
// time-sliced replicas subdivide it), a line between replicas.
function drawGpu(ctx, node, gpu, x, y, s, hatch) {
  ctx.fillStyle = FREE;
  ctx.fillRect(x, y, s, s);
  let at = 0;
  for (const h of gpu.holders) {
    ctx.fillStyle = colorOf(node.status.pods[h.pod], drawn.colors);
    ctx.fillRect(x + (s * at) / 1000, y, (s * h.milli) / 1000, s);
    at += h.milli;
  }
  if (gpu.usedMilli > at) {  // held by pods the map cannot name
    ctx.fillStyle = OUTSIDE;
    ctx.fillRect(x + (s * at) / 1000, y, (s * (gpu.usedMilli - at)) / 1000, s);
  }
  const replicas = node.status.replicas;
  if (replicas > 1 && s >= 10) {
    ctx.fillStyle = 'rgba(255,255,255,0.8)';
    for (let k = 1; k < replicas; k++) ctx.fillRect(x + (s * k) / replicas, y, 1, s);
  }
  if (!gpu.healthy) { ctx.fillStyle = hatch; ctx.fillRect(x, y, s, s); }
}

// A MIG cell: one slice per instance, coloured by who holds it.
function drawMig(ctx, node, cell, x, y, s) {
  const owners = [];
  for (const h of cell.pool.holders) {
    for (let k = 0; k < h.instances; k++) owners.push(node.status.pods[h.pod]);
  }
  const w = s / cell.count;
  for (let k = 0; k < cell.count; k++) {
    const i = cell.first + k;
    ctx.fillStyle = i < owners.length ? colorOf(owners[i], drawn.colors)
      : i < cell.pool.used ? OUTSIDE : FREE;
    ctx.fillRect(x + k * w, y, Math.max(1, w - (s >= 10 ? 1 : 0)), s);
  }
}

function drawNode(ctx, box, hatch) {
  const { node, z } = box;
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(box.x, box.y, box.w, box.h);
  ctx.strokeStyle = !node.status.ready ? '#b3261e'
    : node.status.unschedulable ? '#d98b00' : '#c5ccd3';
  ctx.lineWidth = node.status.ready && !node.status.unschedulable ? 1 : 2;
  ctx.strokeRect(box.x + 0.5, box.y + 0.5, box.w - 1, box.h - 1);
  if (z.label) {
    ctx.fillStyle = '#1d2733';
    ctx.font = `${z.label - 4}px system-ui, sans-serif`;
    ctx.fillText(node.metadata.name, box.x + z.pad, box.y + z.pad + z.label - 5,
      box.w - 2 * z.pad);
  }
  box.cells.forEach((cell, i) => {
    const at = cellOrigin(box, i);
    if (cell.gpu) drawGpu(ctx, node, cell.gpu, at.x, at.y, z.cell, hatch);
    else drawMig(ctx, node, cell, at.x, at.y, z.cell);
  });
  if (node.status.gpuSource === 'DRA') {  // a triangle in the top right corner
    const m = Math.max(4, z.pad + 3);
    ctx.fillStyle = DRA_MARK;
    ctx.beginPath();
    ctx.moveTo(box.x + box.w - m, box.y);
    ctx.lineTo(box.x + box.w, box.y);
    ctx.lineTo(box.x + box.w, box.y + m);
    ctx.fill();
  }
  if (!node.status.ready) {
    ctx.fillStyle = hatch;
    ctx.fillRect(box.x, box.y, box.w, box.h);
  }
}

function summarize(nodes) {
  let gpus = 0, used = 0, unhealthy = 0, migUsed = 0, migCap = 0;
  for (const n of nodes) {
    for (const g of n.status.gpus) {
      gpus++;
      if (!g.healthy) unhealthy++;
      else if (g.usedMilli > 0) used++;
    }
    for (const p of n.status.mig) { migUsed += p.used; migCap += p.capacity; }
  }
  let text = `${nodes.length} nodes · ${gpus} GPUs: ${used} in use, ` +
    `${gpus - used - unhealthy} free, ${unhealthy} unhealthy`;
  if (migCap) text += ` · MIG instances: ${migUsed} of ${migCap} in use`;
  return text;
}

// Draws the map of a gpunodes answer (an unusable answer draws none; the
// caller's note says why). The same map, width and colours draw the same
// picture: a poll that changed nothing (the server's ETag said so)
// redraws nothing.
export function renderMap(result, colors) {
  const canvas = document.getElementById('map');
  const nodes = result.ok ? result.data.items : [];
  const width = Math.max(320, document.getElementById('map-box').clientWidth);
  const key = result.ok ? `${result.data.metadata.resourceVersion} ${width} ` +
    `${[...colors].join()}` : '';
  if (key && key === drawn.key) return;
  drawn.key = key;
  drawn.colors = colors;
  document.getElementById('map-summary').textContent =
    result.ok ? summarize(nodes) : '';
  const { boxes, height } = layoutMap(nodes, width);
  drawn.layout = boxes;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.max(1, Math.round(height * dpr));
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const hatch = hatchPattern(ctx);
  for (const box of boxes) drawNode(ctx, box, hatch);
}

// ---- the map's tooltip -------------------------------------------------------

function holderText(pod) {
  if (!pod) return '  (a pod the map cannot name)';
  const who = `${pod.namespace}/${pod.name}`;
  return pod.clusterQueue
    ? `  ${who}: ClusterQueue ${pod.clusterQueue}, LocalQueue ${pod.localQueue}`
    : `  ${who}: outside the queues`;
}

// What DRA says of a GPU: the claim holding it, the taints on it.
function draGpuLines(g) {
  const lines = [];
  if (g.claim) lines.push(`  allocated to claim ${g.claim}`);
  if (g.taints) lines.push(`  tainted: ${g.taints.join(', ')}`);
  return lines;
}

function cellText(node, cell) {
  const pods = node.status.pods;
  if (cell.gpu) {
    const g = cell.gpu;
    const name = g.draDevice ? ` (DRA device ${g.draDevice})` : '';
    return [`GPU ${g.index}${name}${g.healthy ? '' : ' (unhealthy)'}: ${g.usedMilli} of 1000 ` +
      `milli-GPU in use${node.status.replicas > 1 ? `, ${node.status.replicas} replicas` : ''}`]
      .concat(g.holders.map((h) => `${holderText(pods[h.pod])} (${h.milli} milli)`))
      .concat(draGpuLines(g));
  }
  const p = cell.pool;
  const lines = [`MIG ${p.profile}: ${p.used} of ${p.capacity} instances in use`]
    .concat(p.holders.map((h) => `${holderText(pods[h.pod])} (${h.instances})`));
  if (p.draDevices) lines.push(`  DRA devices: ${p.draDevices.join(', ')}`);
  return lines;
}

// Where the node's GPUs come from, and what DRA keeps off.
function sourceLines(s) {
  const lines = [];
  if (s.gpuSource === 'DRA') lines.push('GPUs published by a DRA driver (ResourceSlices)');
  else if (s.gpuSource === 'DevicePlugin') lines.push('GPUs from the device plugin (allocatable)');
  for (const t of s.draTainted || []) lines.push(`DRA device tainted: ${t}`);
  for (const p of s.draProblems || []) lines.push(`DRA: ${p}`);
  return lines;
}

function tipText(box, cell) {
  const s = box.node.status;
  const head = `${box.node.metadata.name} · ${s.product || 'no GPU product label'}` +
    (s.memoryMiB ? ` · ${Math.round(s.memoryMiB / 1024)} GiB` : '');
  const health = [s.ready ? 'ready' : 'NOT READY (not-ready/unreachable taint)',
    s.unschedulable ? 'cordoned' : 'schedulable'].join(', ');
  return [head, health].concat(sourceLines(s), cell ? cellText(box.node, cell) : [])
    .join('\n');
}

function findCell(box, x, y) {
  const z = box.z;
  const col = Math.floor((x - box.x - z.pad) / (z.cell + z.gap));
  const row = Math.floor((y - box.y - z.pad - z.label) / (z.cell + z.gap));
  if (col < 0 || col > 7 || row < 0) return null;
  const i = row * 8 + col;
  return i < box.cells.length ? box.cells[i] : null;
}

export function onMapMove(event) {
  const canvas = event.currentTarget;
  const rect = canvas.getBoundingClientRect();
  const x = event.clientX - rect.left, y = event.clientY - rect.top;
  const tip = document.getElementById('map-tip');
  const box = drawn.layout.find((b) => x >= b.x && x < b.x + b.w &&
    y >= b.y && y < b.y + b.h);
  if (!box) { tip.hidden = true; return; }
  tip.textContent = tipText(box, findCell(box, x, y));
  tip.hidden = false;
  const left = Math.min(x + 14, canvas.clientWidth - tip.offsetWidth - 4);
  tip.style.left = `${Math.max(0, left)}px`;
  tip.style.top = `${y + 16}px`;
}
