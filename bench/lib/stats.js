export function median(values) {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export function ms(value) {
  if (!Number.isFinite(value)) return 'n/a'
  return value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(1)} ms`
}

export function kb(bytes) {
  return `${(bytes / 1024).toFixed(1)} KB`
}

export function mb(kilobytes) {
  return `${(kilobytes / 1024).toFixed(0)} MB`
}

export function ratio(value, baseline) {
  if (!Number.isFinite(value) || !Number.isFinite(baseline) || baseline === 0) return 'n/a'
  return `${(value / baseline).toFixed(2)}×`
}
