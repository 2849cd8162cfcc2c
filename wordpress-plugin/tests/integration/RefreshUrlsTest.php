<?php
/**
 * Events name the pages each edge node re-fetches once it applied them (`refresh`): an edited
 * post's own page, the front page, its archives and the feed; after a site-wide change the pages
 * every reader reaches (home, menu and navigation links, the newest posts and pages).
 */
class RefreshUrlsTest extends VE_TestCase {

	/** @var Purger_Stack|null The real purger (tests/support/PurgerStack.php). */
	private $stack;

	/** @var array<string,mixed>|null Settings before the test pointed the plugin at the real purger. */
	private $saved;

	protected function tearDown(): void {
		remove_all_filters( 'varnish_edge_refresh_urls' );
		if ( null !== $this->saved ) {
			update_option( \VarnishEdge\Settings::OPTION, $this->saved );
			$this->saved = null;
		}
		$this->stack?->stop();
		$this->stack = null;
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

	/** Starts the real purger (testkit's Redis, a Varnish node, the built purger) and points the plugin at it. */
	private function start_purger(): void {
		$this->stack = new Purger_Stack();
		$purger      = $this->stack->purger;
		$this->saved = get_option( \VarnishEdge\Settings::OPTION );
		update_option( \VarnishEdge\Settings::OPTION, array_merge( $this->saved, array( 'purger_url' => $purger['url'] ) ) );
	}

	/**
	 * A classic menu and a navigation block with links the purger's URL grammar refuses
	 * (`http://user:password@host/`, a port with a leading zero, an empty port), then a title
	 * change, against the real purger: the batch is accepted, nothing is dead-lettered, nothing
	 * falls back to a whole-site purge, the good links are refreshed and the bad ones dropped
	 * and logged without the password. Before the shared grammar the purger refused the batch
	 * (400), the plugin dead-lettered it and purged the whole site, on every site-wide change.
	 */
	public function test_menu_links_outside_the_url_grammar_never_make_the_purger_refuse_a_batch(): void {
		$this->start_purger();
		list( $host, $port ) = explode( ':', Environment::site() );
		$bad = array( "http://editor:hunter2@$host:$port/grammar-about/", "http://$host:0$port/grammar-contact/", "http://$host:/grammar-team/" );
		$menu = wp_create_nav_menu( 'Grammar menu ' . wp_generate_password( 4, false ) );
		foreach ( array_merge( $bad, array( home_url( '/good/' ) ) ) as $i => $url ) {
			wp_update_nav_menu_item( $menu, 0, array( 'menu-item-title' => "Link $i", 'menu-item-url' => $url, 'menu-item-status' => 'publish', 'menu-item-type' => 'custom' ) );
		}
		$this->assertSame( array_merge( $bad, array( home_url( '/good/' ) ) ), array_column( wp_get_nav_menu_items( $menu ), 'url' ), 'WordPress keeps the links as written' );
		$locations = get_theme_mod( 'nav_menu_locations' );
		set_theme_mod( 'nav_menu_locations', array( 'primary' => $menu ) );
		$nav = wp_insert_post( array( 'post_type' => 'wp_navigation', 'post_status' => 'publish', 'post_title' => 'Grammar nav', 'post_content' => '<!-- wp:navigation-link {"label":"Bad","url":"http://nav:hunter2@' . Environment::site() . '/nav-bad/"} /--><!-- wp:navigation-link {"label":"Good","url":"' . home_url( '/nav-good/' ) . '"} /-->' ) );
		$this->end_request();

		$committed = array();
		$capture   = static function ( array $events ) use ( &$committed ): void {
			$committed = array_merge( $committed, $events );
		};
		add_action( 'varnish_edge_events_committed', $capture );
		$log   = Environment::$dir . '/debug.log';
		$start = is_file( $log ) ? filesize( $log ) : 0;
		$title = get_option( 'blogname' );
		update_option( 'blogname', 'Edge Test grammar' );
		$this->end_request();
		remove_action( 'varnish_edge_events_committed', $capture );

		$until = microtime( true ) + 10;
		while ( \VarnishEdge\Plugin::instance()->outbox->stats()['rows'] && microtime( true ) < $until ) {
			usleep( 100000 );
		}
		$stats = \VarnishEdge\Plugin::instance()->outbox->stats();
		$this->assertSame( 0, $stats['dead'], 'no dead letter: ' . $stats['dead_reason'] );
		$this->assertSame( 0, $stats['rows'], 'delivered: ' . $stats['last_error'] );

		$this->assertNotEmpty( $committed );
		$this->assertNotContains( 'all', array_column( $committed, 'kind' ), 'no whole-site purge' );
		$this->assertContains( $this->key( 'site-name' ), $committed[0]['tags'] ?? array() );
		$refreshed = end( $committed )['refresh'] ?? array();
		$this->assertSame( home_url( '/' ), $refreshed[0] );
		$this->assertContains( home_url( '/good/' ), $refreshed );
		$this->assertContains( home_url( '/nav-good/' ), $refreshed );
		foreach ( $refreshed as $url ) {
			$this->assertSame( array( $url, '' ), \VarnishEdge\Url_Grammar::check( $url, Environment::site() ), $url );
		}
		foreach ( array( '/grammar-about/', '/grammar-contact/', '/grammar-team/', '/nav-bad/' ) as $path ) {
			$this->assertNotContains( home_url( $path ), $refreshed, 'a bad link is not rewritten into a good one' );
		}

		clearstatcache();
		$lines = (string) file_get_contents( $log, false, null, $start );
		$this->assertStringContainsString( "refresh URL outside the protocol's URL grammar (has credentials), dropped: http://…@$host:$port/grammar-about/", $lines );
		$this->assertStringContainsString( "dropped: http://…@$host:$port/nav-bad/", $lines );
		$this->assertStringNotContainsString( 'hunter2', $lines );

		update_option( 'blogname', $title );
		set_theme_mod( 'nav_menu_locations', $locations ? $locations : array() );
		wp_delete_nav_menu( $menu );
		wp_delete_post( $nav, true );
		$this->end_request();
	}
}
