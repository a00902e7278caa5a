package clustercheck

import "strings"

// Slots is the number of hash slots of a Redis Cluster.
const Slots = 16384

// Slot returns the Redis Cluster hash slot of key, as a cluster node
// computes it: the CRC16 (XMODEM: polynomial 0x1021, initial value 0) of
// the key's hash tag, the bytes between its first '{' and the first '}'
// after it when there is at least one, else of the whole key, modulo
// Slots. Every key has a slot, the empty key included.
func Slot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if n := strings.IndexByte(key[open+1:], '}'); n > 0 {
			key = key[open+1 : open+1+n]
		}
	}
	return int(crc16(key) % Slots)
}

// crc16 is CRC-16/XMODEM of s, bit by bit.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
