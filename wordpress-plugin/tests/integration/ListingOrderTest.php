<?php
/**
 * Posts published in the same second are listed in one order, render after render: WordPress
 * orders by post_date alone and MariaDB returns tied rows in any order, so the copy a cache kept
 * and the origin's next render listed them differently (the e2e stale-page audit's "stale"
 * category listings that no purge could fix). Listing_Order breaks the tie by post id.
 */
class ListingOrderTest extends VE_TestCase {

	/** @var int */
	private $cat;

	/** @var int[] Posts of one second, newest id first. */
	private $tied = array();

	protected function setUp(): void {
		parent::setUp();
		$this->cat = (int) wp_insert_term( 'Ties ' . wp_generate_password( 6, false, false ), 'category' )['term_id'];
		for ( $i = 0; $i < 4; $i++ ) {
			$this->tied[] = $this->new_post(
				array(
					'post_title'    => 'Same second ' . $i,
					'post_date'     => '2025-03-03 09:00:00',
					'post_category' => array( $this->cat ),
				)
			);
		}
		rsort( $this->tied );
	}

	protected function tearDown(): void {
		foreach ( $this->tied as $id ) {
			wp_delete_post( $id, true );
		}
		wp_delete_term( $this->cat, 'category' );
		$this->end_request();
		parent::tearDown();
	}

	public function test_date_ordered_queries_break_ties_by_id_in_the_same_direction(): void {
		global $wpdb;
		$p = $wpdb->posts;
		$q = new WP_Query( array( 'cat' => $this->cat, 'posts_per_page' => 10 ) );
		$this->assertStringContainsString( "ORDER BY {$p}.post_date DESC, {$p}.ID DESC", $q->request );
		$this->assertSame( $this->tied, array_map( 'intval', wp_list_pluck( $q->posts, 'ID' ) ) );

		$q = new WP_Query( array( 'cat' => $this->cat, 'order' => 'ASC' ) );
		$this->assertStringContainsString( "ORDER BY {$p}.post_date ASC, {$p}.ID ASC", $q->request );

		// A search orders by relevance, then date: the id comes last.
		$q = new WP_Query( array( 's' => 'Same second' ) );
		$this->assertMatchesRegularExpression( "/ORDER BY .*{$p}\.post_date DESC, {$p}\.ID DESC\s+LIMIT/s", $q->request );

		// Any other order is left alone.
		$q = new WP_Query( array( 'cat' => $this->cat, 'orderby' => 'title' ) );
		$this->assertStringNotContainsString( "{$p}.ID", substr( $q->request, strpos( $q->request, 'ORDER BY' ) ) );
	}

	public function test_archive_pages_feed_and_rest_list_tied_posts_newest_id_first_every_time(): void {
		$slug = get_term( $this->cat )->slug;
		for ( $i = 0; $i < 5; $i++ ) {
			$page = Environment::fetch( "/category/{$slug}/" );
			$this->assertSame( 200, $page['status'] );
			preg_match_all( '/wp-block-post post-(\d+)/', $page['body'], $m );
			$this->assertSame( array_slice( $this->tied, 0, 3 ), array_map( 'intval', $m[1] ), "archive, render {$i}" );
			// Three posts a page: the fourth, and only it, on page 2.
			$next = Environment::fetch( "/category/{$slug}/page/2/" );
			preg_match_all( '/wp-block-post post-(\d+)/', $next['body'], $m );
			$this->assertSame( array_slice( $this->tied, 3 ), array_map( 'intval', $m[1] ), "archive page 2, render {$i}" );

			$feed = Environment::fetch( "/category/{$slug}/feed/" );
			preg_match_all( '/<item>\s*<title>([^<]*)<\/title>/', $feed['body'], $m );
			$this->assertSame( array_map( 'get_the_title', $this->tied ), $m[1], "feed, render {$i}" );

			$rest = Environment::fetch( "/wp-json/wp/v2/posts?categories={$this->cat}&_fields=id" );
			$this->assertSame( $this->tied, array_map( 'intval', array_column( json_decode( $rest['body'], true ), 'id' ) ), "REST, render {$i}" );
		}
	}
}
