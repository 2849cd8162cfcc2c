<?php
/**
 * Term counts against the real WordPress: the responses that print a term's count carry its
 * count key, and whatever changes the count (a post published, trashed, unpublished, deleted or
 * moved between terms) purges it; a recount that changes nothing purges nothing.
 */
class TermCountTest extends VE_TestCase {

	/** @var int Page with the Categories block with counts and a tag cloud. */
	private static $lists;

	public static function setUpBeforeClass(): void {
		parent::setUpBeforeClass();
		self::$lists = wp_insert_post( array( 'post_type' => 'page', 'post_status' => 'publish', 'post_title' => 'Counted terms', 'post_name' => 'counted-terms', 'post_content' => '<!-- wp:categories {"showPostCounts":true} /--><!-- wp:tag-cloud /-->' ) );
		\VarnishEdge\Plugin::instance()->queue->dispatch();
	}

	public static function tearDownAfterClass(): void {
		wp_delete_post( self::$lists, true );
		\VarnishEdge\Plugin::instance()->queue->dispatch();
		parent::tearDownAfterClass();
	}

	private function sent(): array {
		return array_merge( $this->sent_tags( false ), $this->sent_tags( true ) );
	}

	public function test_rest_term_items_and_term_lists_carry_count_keys() {
		$tag  = self::$ids['featured'];
		$item = Environment::keys_of( Environment::fetch( '/wp-json/wp/v2/tags/' . $tag ) );
		$this->assertContains( $this->key( "tc-$tag" ), $item );
		$this->assertContains( $this->key( "r-t-$tag" ), $item );
		$this->assertContains( $this->key( "tc-$tag" ), Environment::keys_of( Environment::fetch( '/wp-json/wp/v2/tags' ) ), 'the collection prints each count' );
		$this->assertNotContains( $this->key( "tc-$tag" ), Environment::keys_of( Environment::fetch( '/wp-json/wp/v2/tags?_fields=id,name' ) ), 'no count printed, no count key' );

		$page = Environment::fetch( '/counted-terms/' );
		$this->assertStringContainsString( 'wp-block-categories', $page['body'] );
		$this->assertStringContainsString( 'tag-cloud-link', $page['body'] );
		$keys = Environment::keys_of( $page );
		foreach ( array( 'news', 'sports' ) as $cat ) {
			$this->assertContains( $this->key( 't-' . self::$ids[ $cat ] ), $keys, "$cat named" );
			$this->assertContains( $this->key( 'tc-' . self::$ids[ $cat ] ), $keys, "$cat counted" );
		}
		foreach ( array( 'tx-category', 'tx-post_tag', 'tcx-post_tag', "t-$tag" ) as $key ) {
			$this->assertContains( $this->key( $key ), $keys, $key );
		}
		$this->assertNotContains( $this->key( 'tcx-category' ), $keys, 'a flat list by name does not depend on other counts' );
	}

	public function test_moving_a_post_between_terms_purges_both_counts_and_only_them() {
		$post = $this->new_post( array( 'post_category' => array( self::$ids['news'] ) ) );
		$news = self::$ids['news'];
		$sp   = self::$ids['sports'];
		$page = Environment::keys_of( Environment::fetch( '/counted-terms/' ) );
		$rest = Environment::keys_of( Environment::fetch( "/wp-json/wp/v2/categories/$news" ) );

		wp_set_post_categories( $post, array( $sp ) );
		$this->end_request();
		$this->assertContains( $this->key( "tc-$news" ), $this->sent_tags( false ), 'the term it left: hard' );
		$this->assertContains( $this->key( "tc-$sp" ), $this->sent_tags( true ), 'the term it entered: soft' );
		$this->assertNotEmpty( array_intersect( $this->sent(), $page ), 'the Categories block page' );
		$this->assertNotEmpty( array_intersect( $this->sent(), $rest ), 'the REST item' );
		$this->assertSame( 1, count( array_filter( Environment::webhooks(), static fn( $h ) => 202 === $h['status'] ) ), 'one request' );

		// A draft moved between terms changes no count.
		$draft = $this->new_post( array( 'post_status' => 'draft', 'post_category' => array( $news ) ) );
		wp_set_post_categories( $draft, array( $sp ) );
		$this->end_request();
		$this->assertSame( array(), preg_grep( '/-tc-/', $this->sent() ), 'no count changed' );
		wp_delete_post( $draft, true );
		wp_delete_post( $post, true );
		$this->end_request();
	}

	/** Each way a post's counts change, with the term's REST item really changing. */
	public function test_publish_trash_unpublish_and_delete_purge_the_count() {
		$tag = wp_insert_term( 'Counted', 'post_tag' )['term_id'];
		$this->end_request();
		$count = static function () use ( $tag ) {
			return json_decode( Environment::fetch( "/wp-json/wp/v2/tags/$tag" )['body'], true )['count'];
		};
		$post  = $this->new_post( array( 'post_status' => 'draft', 'tags_input' => array( 'Counted' ) ) );
		$steps = array(
			'publish'   => array( 1, true, fn() => wp_publish_post( $post ) ),
			'trash'     => array( 0, false, fn() => wp_trash_post( $post ) ),
			'restore'   => array(
				1,
				true,
				function () use ( $post ) {
					wp_untrash_post( $post ); // Back as a draft, then published.
					wp_publish_post( $post );
				},
			),
			'unpublish' => array( 0, false, fn() => wp_update_post( array( 'ID' => $post, 'post_status' => 'draft' ) ) ),
			'republish' => array( 1, true, fn() => wp_update_post( array( 'ID' => $post, 'post_status' => 'publish' ) ) ),
			'delete'    => array( 0, false, fn() => wp_delete_post( $post, true ) ),
		);
		foreach ( $steps as $step => list( $expected, $soft, $apply ) ) {
			Environment::clear_webhooks();
			$apply();
			$this->end_request();
			$this->assertSame( $expected, $count(), "$step: the origin's count" );
			$this->assertContains( $this->key( "tc-$tag" ), $this->sent_tags( $soft ), "$step: count key purged " . ( $soft ? 'soft' : 'hard' ) );
			$this->assertContains( $this->key( 'tx-post_tag' ), $this->sent_tags( $soft ), "$step: the tag became empty or not" );
		}
		wp_delete_term( $tag, 'post_tag' );
		$this->end_request();
	}

	/** 500 posts moved from one tag to another in one request: the count keys of two tags. */
	public function test_a_bulk_move_costs_one_key_per_term() {
		$from  = wp_insert_term( 'Bulk from', 'post_tag' )['term_id'];
		$to    = wp_insert_term( 'Bulk to', 'post_tag' )['term_id'];
		$posts = array();
		for ( $i = 0; $i < 500; $i++ ) {
			$posts[] = wp_insert_post( array( 'post_title' => "Bulk move $i", 'post_status' => 'publish', 'post_date' => '2024-01-01 10:00:00', 'tags_input' => array( 'Bulk from' ) ) );
		}
		$this->end_request();
		Environment::clear_webhooks();
		foreach ( $posts as $post ) {
			wp_set_post_tags( $post, array( 'Bulk to' ) );
		}
		$this->end_request();
		$counts = preg_grep( '/-tc-\d+$/', $this->sent() );
		$this->assertEqualsCanonicalizing( array( $this->key( "tc-$from" ), $this->key( "tc-$to" ) ), array_values( $counts ) );
		$this->assertSame( 500, (int) get_term( $to )->count );
		$this->assertSame( 0, (int) get_term( $from )->count );
		foreach ( $posts as $post ) {
			wp_delete_post( $post, true );
		}
		wp_delete_term( $from, 'post_tag' );
		wp_delete_term( $to, 'post_tag' );
		$this->end_request();
	}
}
