<?php
use VarnishEdge\Invalidation;
use VarnishEdge\Key_Scheme;
use VarnishEdge\Term_Count_Policy;

/**
 * The term count rules on their own: counts before and after in, keys out.
 */
class TermCountPolicyTest extends \PHPUnit\Framework\TestCase {

	private function change( int $term, int $before, int $after, string $taxonomy = 'post_tag', string $base = 'tags' ): array {
		return array(
			'term_id'  => $term,
			'taxonomy' => $taxonomy,
			'base'     => $base,
			'before'   => $before,
			'after'    => $after,
		);
	}

	private function of( array ...$changes ): Invalidation {
		return Term_Count_Policy::invalidation( new Key_Scheme( 'ns' ), $changes );
	}

	public function test_a_count_that_went_down_is_purged_hard_with_its_taxonomys_count_lists(): void {
		$inv = $this->of( $this->change( 35, 13, 12 ) );
		$this->assertEqualsCanonicalizing( array( 'ns-tc-35', 'ns-tcx-post_tag', 'ns-r-q-tags' ), array_keys( $inv->hard_tags ) );
		$this->assertSame( array(), $inv->soft_tags );
		$this->assertSame( array( '1 term counts changed' ), array_keys( $inv->reasons ) );
	}

	public function test_a_count_that_went_up_is_purged_soft(): void {
		$inv = $this->of( $this->change( 7, 2, 3, 'category', 'categories' ) );
		$this->assertEqualsCanonicalizing( array( 'ns-tc-7', 'ns-tcx-category', 'ns-r-q-categories' ), array_keys( $inv->soft_tags ) );
		$this->assertSame( array(), $inv->hard_tags );
	}

	public function test_a_recount_that_changed_nothing_invalidates_nothing(): void {
		$this->assertTrue( $this->of( $this->change( 35, 4, 4 ), $this->change( 36, 0, 0 ) )->is_empty() );
	}

	public function test_a_term_becoming_empty_or_not_changes_the_lists_hiding_empty_terms_and_the_sitemap(): void {
		$gone = $this->of( $this->change( 35, 1, 0 ) );
		$this->assertContains( 'ns-tx-post_tag', array_keys( $gone->hard_tags ) );
		$this->assertContains( 'ns-sitemaps', array_keys( $gone->hard_tags ) );
		$new = $this->of( $this->change( 35, 0, 1 ) );
		$this->assertContains( 'ns-tx-post_tag', array_keys( $new->soft_tags ) );
		$this->assertNotContains( 'ns-tx-post_tag', array_keys( $this->of( $this->change( 35, 2, 1 ) )->hard_tags ), 'still listed' );
	}

	public function test_a_post_moved_between_terms_purges_the_left_term_hard_the_entered_one_soft_and_the_taxonomy_hard(): void {
		$inv = $this->of( $this->change( 35, 13, 12 ), $this->change( 40, 5, 6 ) );
		$this->assertContains( 'ns-tc-35', array_keys( $inv->hard_tags ) );
		$this->assertContains( 'ns-tc-40', array_keys( $inv->soft_tags ) );
		$this->assertContains( 'ns-tcx-post_tag', array_keys( $inv->hard_tags ) );
		$this->assertNotContains( 'ns-tcx-post_tag', array_keys( $inv->soft_tags ), 'hard wins' );
	}

	public function test_500_posts_over_three_terms_cost_three_term_keys(): void {
		$changes = array( $this->change( 1, 600, 100 ), $this->change( 2, 500, 0 ), $this->change( 3, 10, 510, 'category', 'categories' ) );
		$inv     = $this->of( ...$changes );
		$this->assertCount( 9, array_merge( $inv->hard_tags, $inv->soft_tags ) );
	}
}
