import { useStdout } from 'ink'
import { useEffect, useState } from 'react'

/** The terminal's size, kept in state so every part drawn at a width is drawn again on resize. */
export function useTerminalSize(): { columns: number; rows: number } {
  const { stdout } = useStdout()
  const read = () => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 })
  const [size, setSize] = useState(read)
  useEffect(() => {
    const onResize = () => setSize(read())
    stdout.on('resize', onResize)
    return () => {
      stdout.off('resize', onResize)
    }
  })
  return size
}
