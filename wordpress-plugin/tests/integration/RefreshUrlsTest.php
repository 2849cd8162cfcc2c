<?php
/**
 * Events name the pages each edge node re-fetches once it applied them (`refresh`): an edited
 * post's own page, the front page, its archives and the feed; after a site-wide change the pages
 * every reader reaches (home, menu and navigation links, the newest posts and pages).
 */
class RefreshUrlsTest extends VE_TestCase {

	protected function tearDown(): void {
		remove_all_filters( 'varnish_edge_refresh_urls' );
		parent::tearDown();
	}

	/** The refresh list of the request's webhooks (it rides on the last event of a batch). */
	private function refreshed(): array {
		$urls = array();
		foreach ( Environment::accepted_events() as $event ) {
			$urls = array_merge( $urls, $event['refresh'] ?? array() );
		}
		return $urls;
	}

	public function test_a_post_edit_refreshes_the_post_home_its_archives_the_feed_and_its_neighbours(): void {
		$id = self::$ids['bravo'];
		wp_update_post( array( 'ID' => $id, 'post_content' => 'The bravo story body, edited ' . microtime( true ) ) );
		$this->end_request();
		$events = Environment::accepted_events();
		$this->assertArrayHasKey( 'refresh', end( $events ), 'on the last event of the batch' );
		$this->assertSame(
			array( get_permalink( $id ), home_url( '/' ), get_term_link( self::$ids['news'], 'category' ), get_term_link( self::$ids['featured'], 'post_tag' ), get_feed_link(), get_permalink( self::$ids['alpha'] ), get_permalink( self::$ids['charlie'] ) ),
			$this->refreshed()
		);
	}

	public function test_unpublishing_refreshes_home_and_archives_never_the_removed_post(): void {
		$id  = $this->new_post( array( 'post_category' => array( self::$ids['sports'] ) ) );
		$url = get_permalink( $id );
		wp_trash_post( $id );
		$this->end_request();
		$refreshed = $this->refreshed();
		$this->assertNotContains( $url, $refreshed );
		$this->assertSame( array( home_url( '/' ), get_term_link( self::$ids['sports'], 'category' ), get_feed_link() ), array_slice( $refreshed, 0, 3 ) );
		$neighbors = array_slice( $refreshed, 3 );
		$this->assertNotEmpty( $neighbors, 'the newest post before it showed a link to it' );
		foreach ( $neighbors as $neighbor ) {
			$this->assertSame( 'publish', get_post_status( url_to_postid( $neighbor ) ), $neighbor );
		}
		wp_delete_post( $id, true );
		$this->end_request();
	}

	public function test_a_site_wide_change_refreshes_home_menu_links_and_the_newest_posts_and_pages(): void {
		$menu = wp_create_nav_menu( 'Refresh menu ' . wp_generate_password( 4, false ) );
		wp_update_nav_menu_item( $menu, 0, array( 'menu-item-title' => 'About', 'menu-item-url' => '/about/?from=menu', 'menu-item-status' => 'publish', 'menu-item-type' => 'custom' ) );
		wp_update_nav_menu_item( $menu, 0, array( 'menu-item-title' => 'Elsewhere', 'menu-item-url' => 'http://elsewhere.test/', 'menu-item-status' => 'publish', 'menu-item-type' => 'custom' ) );
		$locations = get_theme_mod( 'nav_menu_locations' );
		set_theme_mod( 'nav_menu_locations', array( 'primary' => $menu ) );
		$nav = wp_insert_post( array( 'post_type' => 'wp_navigation', 'post_status' => 'publish', 'post_title' => 'Refresh nav', 'post_content' => '<!-- wp:navigation-submenu {"label":"More","url":"/2026/02/bravo/"} --><!-- wp:navigation-link {"label":"Latest","url":"' . home_url( '/latest/' ) . '"} /--><!-- /wp:navigation-submenu -->' ) );
		$this->end_request();
		$this->assertContains( home_url( '/about/?from=menu' ), $this->refreshed(), 'a menu change refreshes the site too' );
		Environment::clear_webhooks();

		$title = get_option( 'blogname' );
		update_option( 'blogname', 'Edge Test renamed' );
		$this->end_request();
		$this->assertSame( array( $this->key( 'site-name' ) ), $this->sent_tags( true ), 'a site title change is soft' );
		$refreshed = $this->refreshed();
		$this->assertSame( home_url( '/' ), $refreshed[0], 'home first' );
		foreach ( array( home_url( '/about/?from=menu' ), home_url( '/2026/02/bravo/' ), home_url( '/latest/' ), get_permalink( self::$ids['hello'] ), get_permalink( self::$ids['golf'] ), get_permalink( self::$ids['about'] ) ) as $url ) {
			$this->assertContains( $url, $refreshed );
		}
		$this->assertNotContains( 'http://elsewhere.test/', $refreshed, 'only this site' );
		$this->assertSame( array_values( array_unique( $refreshed ) ), $refreshed, 'each page once' );
		$this->assertLessThanOrEqual( 50, count( $refreshed ) );

		update_option( 'blogname', $title );
		set_theme_mod( 'nav_menu_locations', $locations ? $locations : array() );
		wp_delete_nav_menu( $menu );
		wp_delete_post( $nav, true );
		$this->end_request();
	}

	public function test_sites_adjust_the_list_with_a_filter(): void {
		add_filter(
			'varnish_edge_refresh_urls',
			static function ( array $urls ) {
				return array_merge( array( home_url( '/shop/' ) ), array_diff( $urls, array( get_feed_link() ) ) );
			}
		);
		wp_update_post( array( 'ID' => self::$ids['alpha'], 'post_content' => 'alpha ' . microtime( true ) ) );
		$this->end_request();
		$refreshed = $this->refreshed();
		$this->assertSame( home_url( '/shop/' ), $refreshed[0] );
		$this->assertContains( get_permalink( self::$ids['alpha'] ), $refreshed );
		$this->assertNotContains( get_feed_link(), $refreshed );
	}
}
