<?php
/**
 * The term count rules: what a change of terms' post counts invalidates.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Pure: counts before and after a request in, invalidation out. A post joining or leaving a term
 * (published, trashed, unpublished, deleted, moved) changes the term's `count`, which REST term
 * items and collections, term lists with counts (Categories block and widget) and tag clouds
 * print. One key per term whose count changed and one per taxonomy, however many posts moved:
 * a bulk action over 500 posts costs as many keys as it touched terms. Like the post rules, a
 * count that went down (a post left) is purged hard, one that went up soft.
 */
class Term_Count_Policy {

	/**
	 * What changed counts invalidate.
	 *
	 * @param Key_Scheme                                                                     $scheme  Key scheme.
	 * @param array<int,array{term_id:int,taxonomy:string,base:string,before:int,after:int}> $changes Terms whose count was
	 *        recomputed in the request (`base`: the taxonomy's REST base; `after` 0 for a term deleted since).
	 */
	public static function invalidation( Key_Scheme $scheme, array $changes ): Invalidation {
		$inv     = new Invalidation();
		$changed = 0;
		foreach ( $changes as $c ) {
			$before = (int) $c['before'];
			$after  = (int) $c['after'];
			if ( $before === $after ) {
				continue;
			}
			++$changed;
			$soft = $after > $before;
			$inv->tags( array( $scheme->term_count( (int) $c['term_id'] ) ), $soft );
			// Lists shaped by counts (tag clouds, REST collections filtered by emptiness or ordered by count).
			$inv->tags( array( $scheme->term_counts( (string) $c['taxonomy'] ), $scheme->rest_query( (string) $c['base'] ) ), $soft );
			if ( 0 === $before || 0 === $after ) {
				// The term appears in or leaves lists that hide empty terms, and the taxonomy's sitemap.
				$inv->tags( array( $scheme->term_list( (string) $c['taxonomy'] ), $scheme->listing( 'sitemaps' ) ), $soft );
			}
		}
		if ( $changed ) {
			$inv->reason( sprintf( '%d term counts changed', $changed ) );
		}
		return self::hard_wins( $inv );
	}

	/**
	 * A key both hard (one term's count went down) and soft (another's went up) is purged hard.
	 */
	private static function hard_wins( Invalidation $inv ): Invalidation {
		$inv->soft_tags = array_diff_key( $inv->soft_tags, $inv->hard_tags );
		return $inv;
	}
}
