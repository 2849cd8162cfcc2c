<?php
/**
 * Packs a list into consecutive groups bounded by count and bytes.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * One packing rule for every limit the purger sets (items per event, events and bytes per
 * request): groups keep the list's order; an item larger than the byte limit gets a group of its
 * own rather than being dropped.
 */
final class Size_Packer {

	/**
	 * Groups of at most $max_count items whose sizes, plus $overhead, stay within $max_bytes.
	 *
	 * @param array<int,mixed>     $items     Items, in order.
	 * @param int                  $max_count Items per group.
	 * @param int                  $max_bytes Bytes per group.
	 * @param callable(mixed): int $size      Bytes an item adds to its group.
	 * @param int                  $overhead  Bytes every group costs on its own.
	 * @return array<int,array<int,mixed>>
	 */
	public static function pack( array $items, int $max_count, int $max_bytes, callable $size, int $overhead = 0 ): array {
		$groups = array();
		$group  = array();
		$bytes  = $overhead;
		foreach ( array_values( $items ) as $item ) {
			$item_bytes = $size( $item );
			if ( $group && ( count( $group ) >= $max_count || $bytes + $item_bytes > $max_bytes ) ) {
				$groups[] = $group;
				$group    = array();
				$bytes    = $overhead;
			}
			$group[] = $item;
			$bytes  += $item_bytes;
		}
		if ( $group ) {
			$groups[] = $group;
		}
		return $groups;
	}
}
